#include "record/coderunhop.h"

#include <QJsonArray>

namespace loopscope {

QJsonObject CodeRunHop::started(const InspectorEvent &event) {
    const QJsonObject &d = event.data;
    return {{QStringLiteral("kind"), QStringLiteral("code_run")},
            {QStringLiteral("at"), event.timestampMs},
            {QStringLiteral("iteration"), event.iteration},
            {QStringLiteral("call_id"), d.value(QStringLiteral("callId")).toString()},
            {QStringLiteral("container_id"), d.value(QStringLiteral("containerId")).toString()},
            {QStringLiteral("code"), d.value(QStringLiteral("code"))},
            {QStringLiteral("stdout"), QString()},
            {QStringLiteral("stderr"), QString()},
            {QStringLiteral("error"), QJsonValue::Null},
            {QStringLiteral("output"), QJsonValue::Null},
            {QStringLiteral("images"), QJsonArray()},
            {QStringLiteral("files"), QJsonArray()},
            {QStringLiteral("duration_ms"), 0.0},
            {QStringLiteral("timed_out"), false},
            {QStringLiteral("truncated"), false},
            {QStringLiteral("edited_from"), QJsonValue::Null},
            {QStringLiteral("decision"), QJsonValue::Null}};
}

void CodeRunHop::appendOutput(QJsonObject &hop, const InspectorEvent &event) {
    const QJsonObject &d = event.data;
    const QString stream = d.value(QStringLiteral("stream")).toString() == QLatin1String("stderr")
                               ? QStringLiteral("stderr")
                               : QStringLiteral("stdout");
    hop.insert(stream,
               QString(hop.value(stream).toString() + d.value(QStringLiteral("text")).toString()));
    hop.insert(QStringLiteral("output_seq"), double(event.sequence));
}

void CodeRunHop::applyExecuted(QJsonObject &hop, const QJsonObject &d) {
    const QJsonValue error = d.value(QStringLiteral("error"));
    hop.insert(QStringLiteral("code"), d.value(QStringLiteral("code")));
    hop.insert(QStringLiteral("stdout"), d.value(QStringLiteral("stdout")).toString());
    hop.insert(QStringLiteral("stderr"), d.value(QStringLiteral("stderr")).toString());
    hop.insert(QStringLiteral("error"), error.isUndefined() ? QJsonValue(QJsonValue::Null) : error);
    hop.insert(QStringLiteral("output"), d.value(QStringLiteral("output")));
    hop.insert(QStringLiteral("duration_ms"), d.value(QStringLiteral("durationMs")));
    hop.insert(QStringLiteral("timed_out"), d.value(QStringLiteral("timedOut")).toBool());
    hop.insert(QStringLiteral("truncated"), d.value(QStringLiteral("truncated")).toBool());
    hop.remove(QStringLiteral("output_seq"));
    for (const char *key : {"images", "files", "edited_from", "decision"})
        if (d.contains(QLatin1String(key)))
            hop.insert(QLatin1String(key), d.value(QLatin1String(key)));
    if (const QString c = d.value(QStringLiteral("containerId")).toString(); !c.isEmpty())
        hop.insert(QStringLiteral("container_id"), c);
}

} // namespace loopscope
