#include "interception/interceptionkeys.h"

#include <QJsonArray>

namespace loopscope::keys {

const QList<QLatin1String> &interceptionInternalPrefixes() {
    static const QList<QLatin1String> prefixes{kWebsearchPrefix, kCompressionPrefix,
                                               kHeadroomPrefix, kCodeInterpreterPrefix};
    return prefixes;
}

const QList<QLatin1String> &nonCodeInterpreterInternalPrefixes() {
    static const QList<QLatin1String> prefixes{kWebsearchPrefix, kCompressionPrefix,
                                               kHeadroomPrefix};
    return prefixes;
}

const QList<QString> &convertedStreamKeys() {
    static const QList<QString> keys = [] {
        QList<QString> out;
        for (const QLatin1String prefix : interceptionInternalPrefixes())
            out.append(QString(prefix + QLatin1String("_converted_stream")));
        return out;
    }();
    return keys;
}

const QList<QLatin1String> &streamOptionsStashKeys() {
    static const QList<QLatin1String> keys{kStreamOptionsStash, kHeadroomStreamOptions,
                                           kWebsearchStreamOptions};
    return keys;
}

const QList<QLatin1String> &agenticLoopInternalLitellmParams() {
    static const QList<QLatin1String> params{kAgenticLoopDepth,
                                             kAgenticLoopFingerprints,
                                             kAgenticLoopApiSurface,
                                             kMaxAgenticLoops,
                                             kActive,
                                             kSandboxKey,
                                             kSessionScoped,
                                             kConvertedStream,
                                             kWebsearchEmitNativeBlocks,
                                             kWebsearchConvertedStream,
                                             kHeadroomConvertedStream};
    return params;
}

bool isInterceptionInternalKey(const QString &key) {
    return isInterceptionInternalKey(key, interceptionInternalPrefixes());
}

bool isInterceptionInternalKey(const QString &key, const QList<QLatin1String> &prefixes) {
    for (const QLatin1String prefix : prefixes) {
        if (key.startsWith(prefix))
            return true;
    }
    return false;
}

bool isAgenticLoopControlKey(const QString &key) {
    return key.startsWith(kAgenticLoopPrefix) || key == kMaxAgenticLoops;
}

bool isLitellmOnlyKey(const QString &key) {
    static const QList<QLatin1String> bookkeeping = {
        kLitellmMetadata,
        QLatin1String("litellm_call_id"),
        QLatin1String("litellm_logging_obj"),
        QLatin1String("litellm_trace_id"),
        QLatin1String("custom_llm_provider"),
        QLatin1String("user_api_key_hash"),
        QLatin1String("acompletion"),
        QLatin1String("aresponses"),
    };
    if (isInterceptionInternalKey(key) || isAgenticLoopControlKey(key))
        return true;
    for (const QLatin1String k : bookkeeping) {
        if (key == k)
            return true;
    }
    return false;
}

QJsonObject providerRequestBody(const QJsonObject &request) {
    // The request less its litellm keys: removing costs no allocation, inserting a few each.
    QStringList litellmOnly;
    for (auto it = request.constBegin(); it != request.constEnd(); ++it) {
        if (isLitellmOnlyKey(it.key()))
            litellmOnly << it.key();
    }
    QJsonObject body = request;
    for (const QString &key : std::as_const(litellmOnly))
        body.remove(key);
    return body;
}

bool isTruthy(const QJsonValue &value) {
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        return false;
    case QJsonValue::Bool:
        return value.toBool();
    case QJsonValue::Double:
        return value.toDouble() != 0.0;
    case QJsonValue::String:
        return !value.toString().isEmpty();
    case QJsonValue::Array:
        return !value.toArray().isEmpty();
    case QJsonValue::Object:
        return !value.toObject().isEmpty();
    }
    return false;
}

bool convertedStreamRequested(const QJsonObject &params) {
    for (const QString &key : convertedStreamKeys()) {
        if (isTruthy(params.value(key)))
            return true;
    }
    return false;
}

QJsonObject asConvertedStream(const QJsonObject &params, QLatin1String prefix) {
    QJsonObject out = params;
    const QJsonValue streamOptions = out.take(QLatin1String("stream_options"));
    out.insert(QLatin1String("stream"), false);
    out.insert(QString(prefix + QLatin1String("_converted_stream")), true);
    if (!streamOptions.isUndefined() && !streamOptions.isNull())
        out.insert(QString(prefix + QLatin1String("_stream_options")), streamOptions);
    return out;
}

std::optional<QJsonValue> stashedStreamOptions(const QJsonObject &params) {
    for (const QLatin1String key : streamOptionsStashKeys()) {
        const QJsonValue v = params.value(key);
        if (!v.isUndefined() && !v.isNull())
            return v;
    }
    return std::nullopt;
}

} // namespace loopscope::keys
