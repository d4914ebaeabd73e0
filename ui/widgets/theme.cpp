#include "widgets/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace loopscope {

bool Theme::systemPrefersDark(const QPalette &systemPalette) {
    // Explicit wish first (e.g. a GTK theme name ending in -dark), then the palette itself.
    const QByteArray gtkTheme = qgetenv("GTK_THEME").toLower();
    if (gtkTheme.contains("dark"))
        return true;
    const QByteArray scheme = qgetenv("LOOPSCOPE_COLOR_SCHEME").toLower();
    if (scheme == "dark")
        return true;
    if (scheme == "light")
        return false;
    return systemPalette.color(QPalette::Window).lightness() < 128;
}

QPalette Theme::darkPalette() {
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x30);
    const QColor base(0x1e, 0x1f, 0x22);
    const QColor text(0xdf, 0xe1, 0xe5);
    const QColor disabled(0x7f, 0x84, 0x8e);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2b));
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, QColor(0x58, 0x9d, 0xf6));
    p.setColor(QPalette::Highlight, QColor(0x35, 0x74, 0xf0));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Disabled, QPalette::Text, disabled);
    p.setColor(QPalette::Disabled, QPalette::ButtonText, disabled);
    p.setColor(QPalette::Disabled, QPalette::WindowText, disabled);
    return p;
}

void Theme::apply(QApplication &app) {
    const QPalette system = QApplication::palette();
    app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    app.setPalette(systemPrefersDark(system) ? darkPalette() : app.style()->standardPalette());
}

} // namespace loopscope
