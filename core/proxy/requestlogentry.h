#pragma once

#include <QByteArray>
#include <QMetaType>
#include <QString>

namespace loopscope {

// One finished request, as the headless log prints it. keyHint is already masked (last 4).
struct RequestLogEntry {
    QString requestId;
    QByteArray method;
    QString path;
    QString model;
    int status = 0; // 499 when the client went away first (nginx's convention)
    double durationMs = 0;
    double overheadMs = 0;
    int iterations = 0;
    QString keyHint;

    // A client-chosen field as one log token: control characters, line and paragraph
    // separators, spaces and backslashes become \xNN / \u{NNNN}, so a decoded path such as
    // "/x%0aPOST ..." or a model name cannot forge a line or a field.
    static QString escapeField(const QString &text) {
        QString out;
        out.reserve(text.size());
        for (const QChar ch : text) {
            const char16_t u = ch.unicode();
            if (u < 0x20 || u == 0x7f || u == u' ' || u == u'\\')
                out += QStringLiteral("\\x%1").arg(uint(u), 2, 16, QLatin1Char('0'));
            else if (u == 0x85 || u == 0x2028 || u == 0x2029 || (u >= 0x80 && u < 0xa0))
                out += QStringLiteral("\\u{%1}").arg(uint(u), 4, 16, QLatin1Char('0'));
            else
                out += ch;
        }
        return out;
    }

    QString toLine() const {
        return QStringLiteral("%1 %2 model=%3 status=%4 duration_ms=%5 overhead_ms=%6 "
                              "iterations=%7 key=%8 id=%9")
            .arg(escapeField(QString::fromLatin1(method)), escapeField(path),
                 model.isEmpty() ? QStringLiteral("-") : escapeField(model))
            .arg(status)
            .arg(durationMs, 0, 'f', 1)
            .arg(overheadMs, 0, 'f', 3)
            .arg(iterations)
            .arg(keyHint.isEmpty() ? QStringLiteral("-") : keyHint, requestId);
    }
};

} // namespace loopscope

Q_DECLARE_METATYPE(loopscope::RequestLogEntry)
