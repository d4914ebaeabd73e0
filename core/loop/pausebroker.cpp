#include "loop/pausebroker.h"

#include "common/futurechain.h"
#include "inspect/eventbus.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTimer>

namespace loopscope {

namespace {

constexpr int kResolvedHistory = 512;

QString newPauseId() {
    quint32 words[3];
    QRandomGenerator::system()->fillRange(words);
    QString out = QStringLiteral("pause_");
    for (const quint32 w : words)
        out += QStringLiteral("%1").arg(w, 8, 16, QLatin1Char('0'));
    return out;
}

QJsonValue nullable(const std::optional<QString> &value) {
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

bool readMatchKey(const QJsonObject &match, const QString &key, std::optional<QString> *out,
                  QString *error) {
    const QJsonValue v = match.value(key);
    if (v.isUndefined() || v.isNull())
        return true;
    if (!v.isString()) {
        *error = QStringLiteral("match.%1 must be a string or null").arg(key);
        return false;
    }
    *out = v.toString();
    return true;
}

QString actionName(PauseDecision::Action action) {
    switch (action) {
    case PauseDecision::Action::Continue:
        return QStringLiteral("continue");
    case PauseDecision::Action::Deny:
        return QStringLiteral("deny");
    case PauseDecision::Action::Abort:
        return QStringLiteral("abort");
    }
    return {};
}

} // namespace

struct PauseBroker::Pending {
    PauseContext context;
    QJsonObject json;
    std::shared_ptr<QPromise<PauseDecision>> promise;
    QTimer *timer = nullptr;
};

std::optional<BreakpointSettings> BreakpointSettings::fromJson(const QJsonObject &json,
                                                               QString *error) {
    BreakpointSettings s;
    QString problem;
    const auto readBool = [&](const char *key, bool *out) {
        const QJsonValue v = json.value(QLatin1String(key));
        if (v.isUndefined() || v.isNull())
            return true;
        if (!v.isBool()) {
            problem = QStringLiteral("%1 must be a boolean").arg(QLatin1String(key));
            return false;
        }
        *out = v.toBool();
        return true;
    };
    bool ok = readBool("code", &s.code) && readBool("upstream_request", &s.upstreamRequest) &&
              readBool("upstream_response", &s.upstreamResponse);
    if (ok) {
        const QJsonValue match = json.value(QStringLiteral("match"));
        if (!match.isUndefined() && !match.isNull() && !match.isObject()) {
            problem = QStringLiteral("match must be an object");
            ok = false;
        } else {
            const QJsonObject m = match.toObject();
            ok = readMatchKey(m, QStringLiteral("model"), &s.matchModel, &problem) &&
                 readMatchKey(m, QStringLiteral("session_id"), &s.matchSessionId, &problem) &&
                 readMatchKey(m, QStringLiteral("code_regex"), &s.codeRegex, &problem);
            if (ok && s.codeRegex && !QRegularExpression(*s.codeRegex).isValid()) {
                problem = QStringLiteral("match.code_regex is not a valid regular expression: %1")
                              .arg(QRegularExpression(*s.codeRegex).errorString());
                ok = false;
            }
        }
    }
    if (ok) {
        const QJsonValue t = json.value(QStringLiteral("timeout_s"));
        if (!t.isUndefined() && !t.isNull()) {
            if (!t.isDouble() || t.toDouble() <= 0 || t.toDouble() > 7 * 24 * 3600) {
                problem = QStringLiteral("timeout_s must be a positive number of seconds");
                ok = false;
            } else {
                s.timeoutS = t.toDouble();
            }
        }
    }
    if (ok) {
        const QJsonValue o = json.value(QStringLiteral("on_timeout"));
        if (!o.isUndefined() && !o.isNull()) {
            const QString v = o.toString();
            if (v != QLatin1String("deny") && v != QLatin1String("continue") &&
                v != QLatin1String("abort")) {
                problem = QStringLiteral("on_timeout must be \"deny\", \"continue\" or \"abort\"");
                ok = false;
            } else {
                s.onTimeout = v;
            }
        }
    }
    if (!ok) {
        if (error)
            *error = problem;
        return std::nullopt;
    }
    return s;
}

QJsonObject BreakpointSettings::toJson() const {
    return {{QStringLiteral("code"), code},
            {QStringLiteral("upstream_request"), upstreamRequest},
            {QStringLiteral("upstream_response"), upstreamResponse},
            {QStringLiteral("match"),
             QJsonObject{{QStringLiteral("model"), nullable(matchModel)},
                         {QStringLiteral("session_id"), nullable(matchSessionId)},
                         {QStringLiteral("code_regex"), nullable(codeRegex)}}},
            {QStringLiteral("timeout_s"), timeoutS},
            {QStringLiteral("on_timeout"), onTimeout}};
}

bool BreakpointSettings::enabled(PauseKind kind) const {
    switch (kind) {
    case PauseKind::Code:
        return code;
    case PauseKind::UpstreamRequest:
        return upstreamRequest;
    case PauseKind::UpstreamResponse:
        return upstreamResponse;
    }
    return false;
}

PauseBroker::PauseBroker(EventBus *events, QObject *parent)
    : QObject(parent)
    , m_events(events) {}

PauseBroker::~PauseBroker() {
    // Nobody can resolve them any more: the loops see an abort (their futures must finish).
    const QStringList ids = m_order;
    for (const QString &id : ids) {
        auto pending = m_pending.take(id);
        if (pending && pending->promise) {
            PauseDecision d;
            d.action = PauseDecision::Action::Abort;
            d.decision = QStringLiteral("aborted");
            finishPromise(pending->promise, d);
        }
    }
}

QString PauseBroker::kindName(PauseKind kind) {
    switch (kind) {
    case PauseKind::Code:
        return QStringLiteral("code");
    case PauseKind::UpstreamRequest:
        return QStringLiteral("upstream_request");
    case PauseKind::UpstreamResponse:
        return QStringLiteral("upstream_response");
    }
    return {};
}

void PauseBroker::setSettings(const BreakpointSettings &settings) {
    m_settings = settings;
    emit settingsChanged(settings.toJson());
}

bool PauseBroker::wants(const PauseContext &context) const {
    if (!m_settings.enabled(context.kind))
        return false;
    if (m_settings.matchModel && *m_settings.matchModel != context.model)
        return false;
    if (m_settings.matchSessionId && *m_settings.matchSessionId != context.sessionId)
        return false;
    if (m_settings.codeRegex) {
        // Upstream kinds have no single code: the regex is searched in the body's JSON text.
        const QString text =
            context.kind == PauseKind::Code || !context.code.isEmpty()
                ? context.code
                : QString::fromUtf8(QJsonDocument(context.body).toJson(QJsonDocument::Compact));
        if (!QRegularExpression(*m_settings.codeRegex).match(text).hasMatch())
            return false;
    }
    if (context.kind == PauseKind::Code &&
        (isAutoApproved(context.flowId) ||
         (!context.sessionId.isEmpty() && isAutoApproved(context.sessionId))))
        return false;
    return true;
}

QFuture<PauseDecision> PauseBroker::pause(const PauseContext &context) {
    auto pending = std::make_shared<Pending>();
    pending->context = context;
    pending->promise = startedPromise<PauseDecision>();
    const QString id = newPauseId();
    pending->json = QJsonObject{
        {QStringLiteral("id"), id},
        {QStringLiteral("flow_id"), context.flowId},
        {QStringLiteral("kind"), kindName(context.kind)},
        {QStringLiteral("iteration"), context.iteration},
        {QStringLiteral("call_id"),
         context.callId.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(context.callId)},
        {QStringLiteral("code"), context.code.isEmpty() && context.kind != PauseKind::Code
                                     ? QJsonValue(QJsonValue::Null)
                                     : QJsonValue(context.code)},
        {QStringLiteral("body"),
         context.kind == PauseKind::Code ? QJsonValue(QJsonValue::Null) : QJsonValue(context.body)},
        {QStringLiteral("session_id"), context.sessionId.isEmpty() ? QJsonValue(QJsonValue::Null)
                                                                   : QJsonValue(context.sessionId)},
        {QStringLiteral("model"), context.model},
        {QStringLiteral("paused_at"), QDateTime::currentMSecsSinceEpoch()},
        {QStringLiteral("timeout_at"),
         QDateTime::currentMSecsSinceEpoch() + qint64(m_settings.timeoutS * 1000)}};
    pending->timer = new QTimer(this);
    pending->timer->setSingleShot(true);
    pending->timer->setInterval(int(qMin(m_settings.timeoutS * 1000, 2147483647.0)));
    connect(pending->timer, &QTimer::timeout, this, [this, id] { onTimeout(id); });
    pending->timer->start();
    m_pending.insert(id, pending);
    m_order.append(id);
    const QFuture<PauseDecision> future = pending->promise->future();
    if (m_events)
        m_events->publish(InspectorEvent::Kind::Paused, context.flowId, context.iteration,
                          pending->json);
    emit paused(shown(pending->json));
    return future;
}

PauseBroker::ResolveResult PauseBroker::resolve(const QString &id, const QJsonObject &request) {
    ResolveResult result;
    const auto it = m_pending.constFind(id);
    if (it == m_pending.constEnd()) {
        if (m_resolved.contains(id)) {
            result.status = ResolveStatus::AlreadyResolved;
            result.pause = shown(m_resolved.value(id));
        }
        return result;
    }
    const PauseContext &context = (*it)->context;
    const QString action = request.value(QStringLiteral("action")).toString();
    PauseDecision d;
    QJsonObject resolution{{QStringLiteral("action"), action}};
    const auto invalid = [&](const QString &why) {
        result.status = ResolveStatus::Invalid;
        result.error = why;
        return result;
    };
    if (action == QLatin1String("continue")) {
        d.action = PauseDecision::Action::Continue;
        d.decision = QStringLiteral("continued");
        d.code = context.code;
        const QJsonValue code = request.value(QStringLiteral("code"));
        const QJsonValue body = request.value(QStringLiteral("body"));
        if (!code.isUndefined() && !code.isNull()) {
            if (context.kind != PauseKind::Code)
                return invalid(QStringLiteral("\"code\" applies to pauses of kind code; edit "
                                              "\"body\" for upstream pauses"));
            if (!code.isString())
                return invalid(QStringLiteral("\"code\" must be a string"));
            if (code.toString() != context.code) {
                d.code = code.toString();
                d.decision = QStringLiteral("edited");
                d.editedFrom = context.code;
                resolution.insert(QStringLiteral("code"), d.code);
                resolution.insert(QStringLiteral("edited_from"), d.editedFrom);
            }
        }
        if (!body.isUndefined() && !body.isNull()) {
            if (context.kind == PauseKind::Code)
                return invalid(QStringLiteral("\"body\" applies to upstream pauses; edit \"code\" "
                                              "for pauses of kind code"));
            if (!body.isObject())
                return invalid(QStringLiteral("\"body\" must be a JSON object"));
            d.body = body.toObject();
            if (*d.body != context.body)
                d.decision = QStringLiteral("edited");
            resolution.insert(QStringLiteral("body"), body);
        }
    } else if (action == QLatin1String("deny")) {
        if (context.kind != PauseKind::Code)
            return invalid(QStringLiteral("\"deny\" applies to pauses of kind code only; use "
                                          "\"abort\" to stop an upstream call"));
        const QJsonValue message = request.value(QStringLiteral("message"));
        if (!message.isUndefined() && !message.isNull() && !message.isString())
            return invalid(QStringLiteral("\"message\" must be a string"));
        d.action = PauseDecision::Action::Deny;
        d.decision = QStringLiteral("denied");
        d.code = context.code;
        d.message = message.toString().isEmpty() ? kDefaultDenyMessage : message.toString();
        resolution.insert(QStringLiteral("message"), d.message);
    } else if (action == QLatin1String("abort")) {
        d.action = PauseDecision::Action::Abort;
        d.decision = QStringLiteral("aborted");
    } else {
        return invalid(QStringLiteral("\"action\" must be \"continue\", \"deny\" or \"abort\""));
    }
    resolution.insert(QStringLiteral("decision"), d.decision);
    finish(id, d, resolution);
    result.status = ResolveStatus::Resolved;
    result.pause = shown(m_resolved.value(id));
    return result;
}

void PauseBroker::onTimeout(const QString &id) {
    const auto it = m_pending.constFind(id);
    if (it == m_pending.constEnd())
        return;
    const PauseContext &context = (*it)->context;
    PauseDecision d;
    d.decision = QStringLiteral("timed_out");
    d.code = context.code;
    // Deny means "do not do it": for an upstream pause (nothing to deny) that is an abort.
    if (m_settings.onTimeout == QLatin1String("continue")) {
        d.action = PauseDecision::Action::Continue;
    } else if (m_settings.onTimeout == QLatin1String("deny") && context.kind == PauseKind::Code) {
        d.action = PauseDecision::Action::Deny;
        d.message = kDefaultDenyMessage;
    } else {
        d.action = PauseDecision::Action::Abort;
    }
    finish(id, d,
           {{QStringLiteral("action"), actionName(d.action)},
            {QStringLiteral("decision"), d.decision},
            {QStringLiteral("message"),
             d.message.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(d.message)}});
}

void PauseBroker::abortFlow(const QString &flowId) {
    const QStringList ids = m_order;
    for (const QString &id : ids) {
        const auto pending = m_pending.value(id);
        if (!pending || pending->context.flowId != flowId)
            continue;
        PauseDecision d;
        d.action = PauseDecision::Action::Abort;
        d.decision = QStringLiteral("aborted");
        finish(id, d,
               {{QStringLiteral("action"), QStringLiteral("abort")},
                {QStringLiteral("decision"), d.decision},
                {QStringLiteral("reason"), QStringLiteral("client disconnected")}});
    }
}

void PauseBroker::abortAll(const QString &reason) {
    const QStringList ids = m_order;
    for (const QString &id : ids) {
        PauseDecision d;
        d.action = PauseDecision::Action::Abort;
        d.decision = QStringLiteral("aborted");
        d.message = reason;
        finish(id, d,
               {{QStringLiteral("action"), QStringLiteral("abort")},
                {QStringLiteral("decision"), d.decision},
                {QStringLiteral("reason"), reason}});
    }
}

void PauseBroker::finish(const QString &id, PauseDecision decision, const QJsonObject &resolution) {
    const std::shared_ptr<Pending> pending = m_pending.take(id);
    if (!pending)
        return;
    m_order.removeOne(id);
    if (pending->timer)
        pending->timer->deleteLater();
    QJsonObject json = pending->json;
    for (auto it = resolution.begin(); it != resolution.end(); ++it)
        if (it.key() == QLatin1String("action") || it.key() == QLatin1String("decision") ||
            it.key() == QLatin1String("reason") || it.key() == QLatin1String("message") ||
            it.key() == QLatin1String("edited_from"))
            json.insert(it.key(), it.value());
        else // the edited code/body, next to the original
            json.insert(QStringLiteral("resolved_") + it.key(), it.value());
    json.insert(QStringLiteral("resolved_at"), QDateTime::currentMSecsSinceEpoch());
    m_resolved.insert(id, json);
    m_resolvedOrder.append(id);
    while (m_resolvedOrder.size() > kResolvedHistory)
        m_resolved.remove(m_resolvedOrder.takeFirst());
    if (m_events)
        m_events->publish(InspectorEvent::Kind::Resumed, pending->context.flowId,
                          pending->context.iteration, json);
    emit resumed(shown(json));
    finishPromise(pending->promise, std::move(decision));
}

void PauseBroker::setAutoApprove(const QString &sessionOrFlowId, bool on) {
    if (sessionOrFlowId.isEmpty())
        return;
    if (on)
        m_autoApproved.insert(sessionOrFlowId);
    else
        m_autoApproved.remove(sessionOrFlowId);
}

bool PauseBroker::isAutoApproved(const QString &sessionOrFlowId) const {
    return m_autoApproved.contains(sessionOrFlowId);
}

QJsonObject PauseBroker::shown(const QJsonObject &pause) const {
    return m_events ? m_events->credentials()->maskObject(pause) : pause;
}

QJsonArray PauseBroker::pending() const {
    QJsonArray out;
    for (const QString &id : m_order)
        if (const auto p = m_pending.value(id))
            out.append(shown(p->json));
    return out;
}

} // namespace loopscope
