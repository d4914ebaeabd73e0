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

    QString toLine() const {
        return QStringLiteral("%1 %2 model=%3 status=%4 duration_ms=%5 overhead_ms=%6 "
                              "iterations=%7 key=%8 id=%9")
            .arg(QString::fromLatin1(method), path, model.isEmpty() ? QStringLiteral("-") : model)
            .arg(status)
            .arg(durationMs, 0, 'f', 1)
            .arg(overheadMs, 0, 'f', 3)
            .arg(iterations)
            .arg(keyHint.isEmpty() ? QStringLiteral("-") : keyHint, requestId);
    }
};

} // namespace loopscope

Q_DECLARE_METATYPE(loopscope::RequestLogEntry)
