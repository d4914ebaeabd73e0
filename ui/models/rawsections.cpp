#include "models/rawsections.h"

#include "inspect/secretmasker.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>

namespace loopscope {

bool RawSections::looksLikeSecret(const QString &text) {
    // OpenAI/Anthropic-style keys ("sk-…", "sk-proj-…", "sk-ant-…") and bearer credentials.
    static const QRegularExpression pattern(
        QStringLiteral("^(?:Bearer\\s+\\S{8,}|sk-[A-Za-z0-9_\\-]{8,})$"),
        QRegularExpression::CaseInsensitiveOption);
    return pattern.match(text.trimmed()).hasMatch();
}

QJsonValue RawSections::mask(const QJsonValue &value) {
    if (value.isObject()) {
        // One pass with SecretMasker's key rules (maskJson would re-mask nested levels twice).
        const QJsonObject object = value.toObject();
        QJsonObject out;
        for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
            if (SecretMasker::isSecretKey(it.key()) && it.value().isString()) {
                const QString secret = it.value().toString();
                out.insert(it.key(), it.key().compare(QLatin1String("authorization"),
                                                      Qt::CaseInsensitive) == 0
                                         ? SecretMasker::maskAuthorization(secret)
                                         : SecretMasker::mask(secret));
            } else {
                out.insert(it.key(), mask(it.value()));
            }
        }
        return out;
    }
    if (value.isArray()) {
        QJsonArray out;
        for (const QJsonValue &v : value.toArray())
            out.append(mask(v));
        return out;
    }
    if (value.isString() && looksLikeSecret(value.toString())) {
        const QString s = value.toString().trimmed();
        return s.startsWith(QLatin1String("bearer"), Qt::CaseInsensitive)
                   ? SecretMasker::maskAuthorization(s)
                   : SecretMasker::mask(s);
    }
    return value;
}

QList<RawSections::Section> RawSections::build(const RequestRecord &record) {
    QList<Section> sections;
    if (record.payloadsDropped) {
        sections.append({QObject::tr("Payloads dropped"),
                         QJsonObject{{QStringLiteral("note"),
                                      QObject::tr("Only the newest requests keep their JSON "
                                                  "documents, to bound memory.")}}});
    }
    sections.append({QObject::tr("Client request"), mask(record.clientRequest)});
    for (const UpstreamCallRecord &call : record.upstreamCalls) {
        const QString n = QString::number(call.iteration >= 0 ? call.iteration + 1
                                                              : int(sections.size() + 1) / 2);
        sections.append({QObject::tr("Upstream request %1").arg(n), mask(call.request)});
        QJsonObject response = call.response;
        if (response.isEmpty() && !call.error.isEmpty())
            response.insert(QStringLiteral("error"), call.error);
        sections.append({QObject::tr("Upstream response %1 (HTTP %2, %3 ms)")
                             .arg(n)
                             .arg(call.status)
                             .arg(call.latencyMs),
                         mask(response)});
    }
    if (record.state == RequestState::Completed) {
        sections.append({QObject::tr("Final response (HTTP %1)").arg(record.httpStatus),
                         mask(record.finalResponse)});
    } else if (record.state == RequestState::Failed) {
        QJsonObject failure{{QStringLiteral("status"), record.httpStatus},
                            {QStringLiteral("message"), record.failureMessage}};
        sections.append({QObject::tr("Failure"), mask(failure)});
    }
    return sections;
}

} // namespace loopscope
