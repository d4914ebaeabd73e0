#include "widgets/theme.h"

#include <QApplication>
#include <QIcon>
#include <QPainter>
#include <QPainterPath>
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

QIcon Theme::appIcon() {
    QIcon icon;
    for (const int size : {16, 32, 48, 64, 128, 256}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter p(&pixmap);
        p.setRenderHint(QPainter::Antialiasing);
        const double s = size / 64.0;
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0x1f, 0x4e, 0xa8));
        p.drawRoundedRect(QRectF(2 * s, 2 * s, 60 * s, 60 * s), 12 * s, 12 * s);
        QPen ring(QColor(0x8f, 0xd1, 0xff), 6 * s, Qt::SolidLine, Qt::RoundCap);
        p.setPen(ring);
        p.setBrush(Qt::NoBrush);
        p.drawArc(QRectF(12 * s, 12 * s, 40 * s, 40 * s), 40 * 16, 290 * 16);
        // The loop's arrow head, then a ">_" prompt inside it.
        QPainterPath head;
        head.moveTo(44 * s, 10 * s);
        head.lineTo(54 * s, 20 * s);
        head.lineTo(41 * s, 22 * s);
        head.closeSubpath();
        p.fillPath(head, QColor(0x8f, 0xd1, 0xff));
        p.setPen(QPen(Qt::white, 4.5 * s, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        p.drawPolyline(
            QPolygonF{QPointF(24 * s, 26 * s), QPointF(31 * s, 32 * s), QPointF(24 * s, 38 * s)});
        p.drawLine(QPointF(34 * s, 39 * s), QPointF(41 * s, 39 * s));
        p.end();
        icon.addPixmap(pixmap);
    }
    return icon;
}

namespace {

// The desktop's palette as it was before Loopscope set its own: "system" is judged by it,
// also after the user switched to light or dark and back.
const QPalette &systemPalette() {
    static const QPalette palette = QApplication::palette();
    return palette;
}

} // namespace

bool Theme::isDark(const QString &choice) {
    if (choice == QLatin1String("dark"))
        return true;
    if (choice == QLatin1String("light"))
        return false;
    return systemPrefersDark(systemPalette());
}

void Theme::apply(QApplication &app, const QString &choice) {
    systemPalette(); // captured before the first setPalette
    if (!app.style() || app.style()->name().compare(QLatin1String("fusion"), Qt::CaseInsensitive))
        app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    app.setPalette(isDark(choice) ? darkPalette() : app.style()->standardPalette());
    app.setWindowIcon(appIcon());
}

} // namespace loopscope
