#include "conversation/ssewriter.h"

#include <QJsonDocument>

namespace loopscope {

QByteArray SseWriter::frame(QByteArrayView eventName, QByteArrayView data) {
    QByteArray out;
    out.reserve(eventName.size() + data.size() + 16);
    if (!eventName.isEmpty() && eventName != QByteArrayView("message"))
        out.append("event: ").append(eventName).append('\n');
    // A line break inside the data would end the field early: each line gets its own "data:".
    qsizetype start = 0;
    for (;;) {
        const qsizetype nl = data.indexOf('\n', start);
        QByteArrayView line = data.sliced(start, (nl < 0 ? data.size() : nl) - start);
        if (line.endsWith('\r'))
            line.chop(1);
        out.append("data: ").append(line).append('\n');
        if (nl < 0)
            break;
        start = nl + 1;
    }
    out.append('\n');
    return out;
}

QByteArray SseWriter::frame(QByteArrayView eventName, const QJsonObject &data) {
    return frame(eventName, QJsonDocument(data).toJson(QJsonDocument::Compact));
}

QByteArray SseWriter::done() {
    return QByteArrayLiteral("data: [DONE]\n\n");
}

} // namespace loopscope
