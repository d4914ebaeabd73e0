#pragma once

class QApplication;
class QIcon;
class QPalette;

namespace loopscope {

// Fusion with a light or dark palette chosen from the system's own colours, so the window looks
// consistent on every Linux desktop (Qt 6.4 has no colour-scheme API to ask directly).
class Theme {
public:
    static void apply(QApplication &app);
    static bool systemPrefersDark(const QPalette &systemPalette);
    static QPalette darkPalette();
    // The window icon, painted (a loop around a code cursor) so no image files are needed.
    static QIcon appIcon();
};

} // namespace loopscope
