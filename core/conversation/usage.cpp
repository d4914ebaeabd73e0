#include "conversation/usage.h"

namespace loopscope {

namespace {

// The first of `keys` that holds a number, in `object`.
QJsonValue firstNumber(const QJsonObject &object, std::initializer_list<const char *> keys) {
    for (const char *key : keys)
        if (const QJsonValue v = object.value(QLatin1String(key)); v.isDouble())
            return v;
    return {};
}

qint64 count(const QJsonValue &v) {
    return qint64(v.toDouble());
}

void put(QJsonObject &object, const char *key, qint64 value, bool reported) {
    if (reported || value != 0 || object.contains(QLatin1String(key)))
        object.insert(QLatin1String(key), value);
}

// A details object (input_tokens_details, …) of `base` with one count put in; left out when it
// stays empty.
void putDetail(QJsonObject &base, const char *details, const char *key, qint64 value,
               bool reported) {
    QJsonObject d = base.value(QLatin1String(details)).toObject();
    put(d, key, value, reported);
    if (!d.isEmpty() || base.contains(QLatin1String(details)))
        base.insert(QLatin1String(details), d);
}

} // namespace

Usage Usage::fromWire(const QJsonObject &usage) {
    Usage u;
    const QJsonValue in = firstNumber(usage, {"input_tokens", "prompt_tokens"});
    const QJsonValue out = firstNumber(usage, {"output_tokens", "completion_tokens"});
    u.hasInput = in.isDouble();
    u.hasOutput = out.isDouble();
    u.input = count(in);
    u.output = count(out);
    u.total = count(usage.value(QStringLiteral("total_tokens")));
    if (u.total == 0)
        u.total = u.input + u.output;
    const QJsonObject inDetails =
        usage.value(QStringLiteral("input_tokens_details"))
            .toObject(usage.value(QStringLiteral("prompt_tokens_details")).toObject());
    const QJsonObject outDetails =
        usage.value(QStringLiteral("output_tokens_details"))
            .toObject(usage.value(QStringLiteral("completion_tokens_details")).toObject());
    u.reasoning = count(outDetails.value(QStringLiteral("reasoning_tokens")));
    QJsonValue read = usage.value(QStringLiteral("cache_read_input_tokens"));
    if (!read.isDouble())
        read = inDetails.value(QStringLiteral("cached_tokens"));
    QJsonValue write = usage.value(QStringLiteral("cache_creation_input_tokens"));
    if (!write.isDouble())
        write = inDetails.value(QStringLiteral("cache_write_tokens"));
    u.hasCache = read.isDouble() || write.isDouble();
    u.cacheRead = count(read);
    u.cacheWrite = count(write);
    const QJsonObject server = usage.value(QStringLiteral("server_tool_use")).toObject();
    for (auto it = server.constBegin(); it != server.constEnd(); ++it)
        u.serverToolRequests += count(it.value());
    return u;
}

QJsonObject Usage::toJson() const {
    QJsonObject n{{QStringLiteral("input_tokens"), input},
                  {QStringLiteral("output_tokens"), output},
                  {QStringLiteral("total_tokens"), total}};
    if (hasCache) {
        n.insert(QStringLiteral("cache_read_tokens"), cacheRead);
        n.insert(QStringLiteral("cache_write_tokens"), cacheWrite);
    }
    return n;
}

QJsonObject Usage::toResponses(QJsonObject u) const {
    if (u.isEmpty() && !hasInput && !hasOutput && !hasCache)
        return {};
    // The Usage type requires both details objects; a usage made here has them at zero.
    const bool fresh = u.isEmpty();
    put(u, "input_tokens", input, hasInput);
    putDetail(u, "input_tokens_details", "cached_tokens", cacheRead, hasCache || fresh);
    if (cacheWrite != 0)
        putDetail(u, "input_tokens_details", "cache_write_tokens", cacheWrite, false);
    put(u, "output_tokens", output, hasOutput);
    putDetail(u, "output_tokens_details", "reasoning_tokens", reasoning, fresh);
    put(u, "total_tokens", total, true);
    return u;
}

QJsonObject Usage::toChat(QJsonObject u) const {
    if (u.isEmpty() && !hasInput && !hasOutput && !hasCache)
        return {};
    put(u, "prompt_tokens", input, hasInput);
    put(u, "completion_tokens", output, hasOutput);
    put(u, "total_tokens", total, true);
    putDetail(u, "prompt_tokens_details", "cached_tokens", cacheRead, false);
    putDetail(u, "completion_tokens_details", "reasoning_tokens", reasoning, false);
    return u;
}

QJsonObject Usage::toMessages(QJsonObject u) const {
    if (u.isEmpty() && !hasInput && !hasOutput && !hasCache)
        return {};
    put(u, "input_tokens", input, hasInput);
    put(u, "cache_creation_input_tokens", cacheWrite, false);
    put(u, "cache_read_input_tokens", cacheRead, false);
    put(u, "output_tokens", output, hasOutput);
    return u;
}

} // namespace loopscope
