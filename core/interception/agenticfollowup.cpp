#include "interception/agenticfollowup.h"

#include "interception/codeexecutiontool.h"
#include "interception/interceptionkeys.h"

#include <QJsonDocument>

#include <cmath>

namespace loopscope {

namespace {

const QString kToolChoice = QStringLiteral("tool_choice");

// Python-ish repr for the max_agentic_loops error texts.
QString reprOf(const QJsonValue &value) {
    switch (value.type()) {
    case QJsonValue::String:
        return QLatin1Char('\'') + value.toString() + QLatin1Char('\'');
    case QJsonValue::Bool:
        return value.toBool() ? QStringLiteral("True") : QStringLiteral("False");
    case QJsonValue::Double:
        return QString::number(value.toDouble(), 'g', 17);
    case QJsonValue::Array:
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object:
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        break;
    }
    return QStringLiteral("None");
}

// Keys never carried into a follow-up's kwargs.
bool droppedFromFollowUpKwargs(const QString &key) {
    if (key == QLatin1String("litellm_logging_obj") || key == QLatin1String("acompletion") ||
        key == QLatin1String("aresponses"))
        return true;
    if (keys::isInterceptionInternalKey(key, keys::nonCodeInterpreterInternalPrefixes()))
        return true;
    // The follow-up is never streamed; only the outermost level replays a stream.
    return keys::convertedStreamKeys().contains(key);
}

} // namespace

QString AgenticFollowUp::fingerprint(const QJsonObject &gatePayload) {
    // QJsonObject keeps its keys sorted, so compact JSON is LiteLLM's sort_keys dump.
    return QString::fromUtf8(QJsonDocument(gatePayload).toJson(QJsonDocument::Compact));
}

std::optional<QString> AgenticFollowUp::safetyRailError(const QString &fingerprint,
                                                        const QStringList &fingerprints, int depth,
                                                        int maxLoops, const QString &model) {
    if (fingerprints.contains(fingerprint))
        return QStringLiteral(
            "Agentic loop detected repeated tool-call fingerprint; aborting rerun");
    if (depth >= maxLoops)
        return QStringLiteral("Exceeded max_agentic_loops=%1 for model=%2")
            .arg(maxLoops)
            .arg(model);
    return std::nullopt;
}

Outcome<int> AgenticFollowUp::validatedMaxAgenticLoops(const QJsonValue &value,
                                                       const QString &field, int fallback) {
    const auto notInteger = [&] {
        return Outcome<int>::failure(field + QStringLiteral(" must be an integer, got ") +
                                     reprOf(value));
    };
    int n = 0;
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        return Outcome<int>::success(fallback);
    case QJsonValue::Double: {
        const double d = value.toDouble();
        if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) > 1e9)
            return notInteger();
        n = int(d);
        break;
    }
    case QJsonValue::String: {
        bool ok = false;
        n = value.toString().trimmed().toInt(&ok);
        if (!ok)
            return notInteger();
        break;
    }
    default: // bool, list, map
        return notInteger();
    }
    if (n < 1)
        return Outcome<int>::failure(field + QStringLiteral(" must be at least 1, got ") +
                                     QString::number(n));
    return Outcome<int>::success(n);
}

Outcome<QJsonObject> AgenticFollowUp::buildFollowUpRequest(const AgenticLoopPlan &plan,
                                                           const FollowUpContext &context) {
    const AgenticRequest &request = context.request;
    const bool chat = request.isChat();
    const AgenticLoopRequestPatch patch = plan.requestPatch.value_or(AgenticLoopRequestPatch{});
    if (!patch.messages) {
        return Outcome<QJsonObject>::failure(
            chat ? QStringLiteral("Agentic loop plan missing patched messages")
                 : QStringLiteral("Agentic loop plan missing patched responses input"));
    }

    // Provider params.
    QJsonObject params = request.optionalParams;
    for (auto it = patch.optionalParams.begin(); it != patch.optionalParams.end(); ++it)
        params.insert(it.key(), it.value());
    if (patch.tools)
        params.insert(QLatin1String("tools"), *patch.tools);
    // A forced choice of the code tool would force another call every round (LiteLLM's
    // Responses driver carries it over; its chat driver drops it).
    if (CodeExecutionTool::targetsCodeInterpreter(params.value(kToolChoice)) ||
        (chat && !patch.optionalParams.contains(kToolChoice)))
        params.remove(kToolChoice);
    params.remove(QLatin1String("stream"));
    params.remove(QLatin1String("stream_options"));
    params.remove(keys::kConvertedStream);

    // Litellm-level kwargs: request's, then the plan's; a key sent as a param always wins.
    // Built from the plan's (it wins, and nearly always repeats the request's) so that the
    // usual round copies no key: every insert into a QJsonObject costs a search and a copy.
    const QString messagesKey = request.messagesKey();
    const auto carried = [&](const QString &key) {
        return !params.contains(key) && key != QLatin1String("model") && key != messagesKey &&
               !droppedFromFollowUpKwargs(key);
    };
    QJsonObject kwargs = patch.kwargs;
    QStringList notCarried;
    for (auto it = patch.kwargs.constBegin(); it != patch.kwargs.constEnd(); ++it) {
        if (!carried(it.key()))
            notCarried << it.key();
    }
    for (const QString &key : std::as_const(notCarried))
        kwargs.remove(key);
    for (auto it = request.kwargs.constBegin(); it != request.kwargs.constEnd(); ++it) {
        if (!patch.kwargs.contains(it.key()) && carried(it.key()))
            kwargs.insert(it.key(), it.value());
    }
    kwargs.insert(keys::kAgenticLoopDepth, context.depth + 1);
    kwargs.insert(keys::kMaxAgenticLoops, context.maxLoops);
    QJsonArray fingerprints = QJsonArray::fromStringList(context.fingerprints);
    fingerprints.append(context.fingerprint);
    kwargs.insert(keys::kAgenticLoopFingerprints, fingerprints);
    if (chat) {
        // LiteLLM's chat driver mirrors loop state into litellm_metadata.
        QJsonObject metadata = kwargs.value(keys::kLitellmMetadata).toObject();
        for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
            if (keys::isAgenticLoopControlKey(it.key()) ||
                keys::isInterceptionInternalKey(it.key()))
                metadata.insert(it.key(), it.value());
        }
        kwargs.insert(keys::kLitellmMetadata, metadata);
    }

    // No key is in both (kwargs leave out what params send).
    QJsonObject followUp = kwargs;
    for (auto it = params.constBegin(); it != params.constEnd(); ++it)
        followUp.insert(it.key(), it.value());
    const QString model = patch.model.value_or(QString());
    followUp.insert(QLatin1String("model"), model.isEmpty() ? request.model : model);
    followUp.insert(messagesKey, *patch.messages);
    return Outcome<QJsonObject>::success(followUp);
}

} // namespace loopscope
