#pragma once

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QString>

// Test helper: splits an SSE body into (event, data) frames the way SDKs do (blank-line framing).
struct SseFrame {
    QString event;
    QByteArray data;
    QJsonObject json() const { return QJsonDocument::fromJson(data).object(); }
};

inline QList<SseFrame> parseSse(const QByteArray &body) {
    QList<SseFrame> frames;
    const QList<QByteArray> blocks = QByteArray(body).replace("\r\n", "\n").split('\n');
    SseFrame current;
    bool any = false;
    for (const QByteArray &line : blocks) {
        if (line.isEmpty()) {
            if (any)
                frames.append(current);
            current = {};
            any = false;
        } else if (line.startsWith("event: ")) {
            current.event = QString::fromUtf8(line.mid(7));
            any = true;
        } else if (line.startsWith("data: ")) {
            if (!current.data.isEmpty())
                current.data += '\n';
            current.data += line.mid(6);
            any = true;
        }
    }
    if (any)
        frames.append(current);
    return frames;
}
