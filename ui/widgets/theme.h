#pragma once

#include <QString>

class QApplication;
class QIcon;
class QPalette;

namespace loopscope {

// Fusion with a light or dark palette chosen from the system's own colours, so the window looks
// consistent on every Linux desktop (Qt 6.4 has no colour-scheme API to ask directly), or the
// one the user chose in Settings.
class Theme {
public:
    // `choice`: "system" (follow the desktop), "light" or "dark" (the Settings' Theme). Can be
    // called again at any time: the palette changes live.
    static void apply(QApplication &app, const QString &choice = QStringLiteral("system"));
    // What `choice` resolves to on this desktop: true for dark.
    static bool isDark(const QString &choice);
    static bool systemPrefersDark(const QPalette &systemPalette);
    static QPalette darkPalette();
    // The window icon, painted (a loop around a code cursor) so no image files are needed.
    static QIcon appIcon();
};

} // namespace loopscope
