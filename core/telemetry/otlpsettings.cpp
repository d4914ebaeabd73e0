#include "telemetry/otlpsettings.h"

#include <QUrl>

namespace loopscope {

namespace {

bool isHttpUrl(const QString &text) {
    const QUrl url(text, QUrl::StrictMode);
    return url.isValid() &&
           (url.scheme() == QLatin1String("http") || url.scheme() == QLatin1String("https")) &&
           !url.host().isEmpty();
}

} // namespace

QString OtlpSettings::url() const {
    if (!tracesUrl.isEmpty())
        return tracesUrl;
    QString base = endpoint;
    if (base.endsWith(QLatin1String("/v1/traces")))
        return base;
    while (base.endsWith(u'/'))
        base.chop(1);
    return base + QStringLiteral("/v1/traces");
}

std::optional<OtlpSettings::Protocol> OtlpSettings::parseProtocol(const QString &text) {
    const QString t = text.trimmed().toLower();
    if (t == QLatin1String("http/json"))
        return Protocol::Json;
    if (t == QLatin1String("http/protobuf"))
        return Protocol::Protobuf;
    return std::nullopt;
}

QString OtlpSettings::protocolName(Protocol protocol) {
    return protocol == Protocol::Json ? QStringLiteral("http/json")
                                      : QStringLiteral("http/protobuf");
}

bool OtlpSettings::parseHeader(const QString &text, QPair<QByteArray, QByteArray> *header) {
    const qsizetype eq = text.indexOf(u'=');
    if (eq <= 0)
        return false;
    const QByteArray name = text.left(eq).trimmed().toUtf8();
    if (name.isEmpty() || name.contains(' ') || name.contains('\n') || name.contains('\r'))
        return false;
    const QByteArray value = text.mid(eq + 1).trimmed().toUtf8();
    if (value.contains('\n') || value.contains('\r'))
        return false;
    *header = qMakePair(name, value);
    return true;
}

bool OtlpSettings::parseHeaderList(const QString &text, QList<QPair<QByteArray, QByteArray>> *out) {
    for (const QString &item : text.split(u',', Qt::SkipEmptyParts)) {
        QPair<QByteArray, QByteArray> header;
        if (!parseHeader(item, &header))
            return false;
        header.second = QByteArray::fromPercentEncoding(header.second);
        out->append(header);
    }
    return true;
}

bool OtlpSettings::applyEnvironment(const QProcessEnvironment &env, QString *error) {
    const QString traces = env.value(QStringLiteral("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"));
    const QString base = env.value(QStringLiteral("OTEL_EXPORTER_OTLP_ENDPOINT"));
    if (!traces.isEmpty()) {
        if (!isHttpUrl(traces)) {
            *error = QStringLiteral("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: not an http(s) URL");
            return false;
        }
        tracesUrl = traces;
    } else if (!base.isEmpty()) {
        if (!isHttpUrl(base)) {
            *error = QStringLiteral("OTEL_EXPORTER_OTLP_ENDPOINT: not an http(s) URL");
            return false;
        }
        endpoint = base;
    }
    for (const char *name : {"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}) {
        const QString list = env.value(QLatin1String(name));
        if (!list.isEmpty() && !parseHeaderList(list, &headers)) {
            *error = QStringLiteral("%1: expected k1=v1,k2=v2").arg(QLatin1String(name));
            return false;
        }
    }
    for (const char *name : {"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"}) {
        const QString value = env.value(QLatin1String(name));
        if (value.isEmpty())
            continue;
        const auto p = parseProtocol(value);
        if (!p) {
            *error = QStringLiteral("%1: '%2' is not supported (http/json or http/protobuf)")
                         .arg(QLatin1String(name), value.left(40));
            return false;
        }
        protocol = *p;
    }
    return true;
}

bool OtlpSettings::applyConfig(const QJsonObject &otlp, const QProcessEnvironment &env,
                               QString *error) {
    const QJsonValue ep = otlp.value(QStringLiteral("endpoint"));
    if (!ep.isUndefined() && !ep.isNull()) {
        if (!ep.isString() || !isHttpUrl(ep.toString())) {
            *error = QStringLiteral("general_settings.otlp.endpoint: not an http(s) URL");
            return false;
        }
        endpoint = ep.toString();
        tracesUrl.clear();
    }
    const QJsonValue hs = otlp.value(QStringLiteral("headers"));
    if (hs.isObject()) {
        const QJsonObject map = hs.toObject();
        for (auto it = map.begin(); it != map.end(); ++it) {
            if (!it.value().isString() && !it.value().isDouble()) {
                *error = QStringLiteral("general_settings.otlp.headers.%1: must be a string")
                             .arg(it.key());
                return false;
            }
            QString value = it.value().toVariant().toString();
            if (value.startsWith(QLatin1String("os.environ/"))) {
                const QString name = value.mid(11);
                if (!env.contains(name)) {
                    *error = QStringLiteral("general_settings.otlp.headers.%1: environment "
                                            "variable %2 is not set")
                                 .arg(it.key(), name);
                    return false;
                }
                value = env.value(name);
            }
            headers.append(qMakePair(it.key().toUtf8(), value.toUtf8()));
        }
    } else if (!hs.isUndefined() && !hs.isNull()) {
        *error = QStringLiteral("general_settings.otlp.headers: must be a mapping");
        return false;
    }
    const QJsonValue pr = otlp.value(QStringLiteral("protocol"));
    if (!pr.isUndefined() && !pr.isNull()) {
        const auto p = parseProtocol(pr.toString());
        if (!p) {
            *error = QStringLiteral("general_settings.otlp.protocol: http/json or http/protobuf");
            return false;
        }
        protocol = *p;
    }
    const QJsonValue cc = otlp.value(QStringLiteral("capture_content"));
    if (cc.isBool())
        captureContent = cc.toBool();
    else if (!cc.isUndefined() && !cc.isNull()) {
        *error = QStringLiteral("general_settings.otlp.capture_content: must be true or false");
        return false;
    }
    return true;
}

} // namespace loopscope
