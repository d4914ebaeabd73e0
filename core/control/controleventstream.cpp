#include "control/controleventstream.h"

#include "http/responsesink.h"

namespace loopscope {

namespace {

QString snake(const QString &key) {
    QString out;
    out.reserve(key.size() + 4);
    for (const QChar c : key) {
        if (c.isUpper()) {
            if (!out.isEmpty())
                out += u'_';
            out += c.toLower();
        } else {
            out += c;
        }
    }
    return out;
}

} // namespace

ControlEventStream::ControlEventStream(QObject *parent)
    : QObject(parent) {
    m_heartbeat.setInterval(kHeartbeatMs);
    connect(&m_heartbeat, &QTimer::timeout, this, &ControlEventStream::heartbeat);
}

QJsonObject ControlEventStream::snakeCase(const QJsonObject &object) {
    QJsonObject out;
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QJsonValue v = it.value();
        out.insert(snake(it.key()), v.isObject() ? QJsonValue(snakeCase(v.toObject())) : v);
    }
    return out;
}

std::optional<std::pair<QByteArray, QJsonObject>>
ControlEventStream::map(const InspectorEvent &event) {
    using Kind = InspectorEvent::Kind;
    QByteArray name;
    QJsonObject data = snakeCase(event.data);
    switch (event.kind) {
    case Kind::CodeRunStarted:
        name = "code_run.started";
        break;
    case Kind::CodeRunOutput:
        name = "code_run.output";
        break;
    case Kind::CodeExecuted:
        name = "code_run.finished";
        break;
    case Kind::SandboxCreated:
        name = "sandbox.created";
        break;
    case Kind::SandboxReused:
        name = "sandbox.reused";
        break;
    case Kind::SandboxDeleted:
    case Kind::SandboxEvicted:
    case Kind::SandboxExpired:
        name = "sandbox.deleted";
        data.insert(QStringLiteral("reason"),
                    event.kind == Kind::SandboxDeleted   ? QStringLiteral("deleted")
                    : event.kind == Kind::SandboxEvicted ? QStringLiteral("evicted")
                                                         : QStringLiteral("expired"));
        break;
    case Kind::SandboxDeleteFailed:
        name = "sandbox.delete_failed";
        break;
    case Kind::Log:
        name = "log";
        break;
    case Kind::UpstreamCallStarted: // which call is out; its body is in the flow (GET /flows/{id})
        name = "upstream_call.started";
        data.remove(QStringLiteral("request"));
        break;
    // The flow's own life is told by flow.* summaries from the store; hop events and response
    // chunks are the recorder's raw material, too fine-grained (and large) for subscribers.
    case Kind::RequestStarted:
    case Kind::UpstreamCall:
    case Kind::OutputsInjected:
    case Kind::RequestFinished:
    case Kind::RequestFailed:
    case Kind::ClientRequest:
    case Kind::UpstreamRequest:
    case Kind::UpstreamResponse:
    case Kind::ClientResponse:
    case Kind::ClientResponseChunk:
    case Kind::ExchangeFinished:
        return std::nullopt;
    default: // kinds added later (paused, resumed, …) pass under their own names
        name = InspectorEvent::kindName(event.kind).toUtf8();
        break;
    }
    if (!event.requestId.isEmpty())
        data.insert(QStringLiteral("flow_id"), event.requestId);
    if (event.iteration >= 0)
        data.insert(QStringLiteral("iteration"), event.iteration);
    data.insert(QStringLiteral("at"), event.timestampMs);
    return std::make_pair(name, data);
}

void ControlEventStream::subscribe(ResponseSink *sink) {
    prune();
    if (m_subscribers.size() >= kMaxSubscribers) {
        sink->sendError(
            503,
            QStringLiteral("Too many event subscribers (%1); close one first").arg(kMaxSubscribers),
            QStringLiteral("server_error"), QStringLiteral("too_many_subscribers"));
        return;
    }
    sink->beginSse(200, {{QByteArrayLiteral("X-Accel-Buffering"), QByteArrayLiteral("no")}});
    sink->writeChunk(QByteArrayLiteral(": connected\n\n"));
    m_subscribers.append(sink);
    connect(sink, &ResponseSink::clientGone, this, &ControlEventStream::prune,
            Qt::QueuedConnection);
    if (!m_heartbeat.isActive())
        m_heartbeat.start();
    announce();
}

int ControlEventStream::subscriberCount() const {
    int n = 0;
    for (const auto &s : m_subscribers)
        if (s && !s->isClientGone() && !s->isFinished())
            ++n;
    return n;
}

void ControlEventStream::shutdown() {
    m_heartbeat.stop();
    const auto subscribers = m_subscribers;
    m_subscribers.clear();
    for (const auto &s : subscribers)
        if (s && !s->isFinished())
            s->endStream();
    announce();
}

void ControlEventStream::prune() {
    m_subscribers.removeIf(
        [](const QPointer<ResponseSink> &s) { return !s || s->isClientGone() || s->isFinished(); });
    if (m_subscribers.isEmpty())
        m_heartbeat.stop();
    announce();
}

void ControlEventStream::announce() {
    if (m_announcedAny == !m_subscribers.isEmpty())
        return;
    m_announcedAny = !m_subscribers.isEmpty();
    emit subscribersChanged(m_announcedAny);
}

void ControlEventStream::publishEvent(const InspectorEvent &event) {
    if (m_subscribers.isEmpty())
        return;
    if (const auto sse = map(event))
        broadcast(sse->first, sse->second);
}

void ControlEventStream::publishFlow(const QByteArray &name, const QJsonObject &summary) {
    if (m_subscribers.isEmpty())
        return;
    QJsonObject data = summary;
    data.insert(QStringLiteral("flow_id"), summary.value(QStringLiteral("id")));
    broadcast(name, data);
}

void ControlEventStream::broadcast(const QByteArray &name, const QJsonObject &data) {
    bool dropped = false;
    for (const auto &s : std::as_const(m_subscribers)) {
        if (!s || s->isClientGone() || s->isFinished()) {
            dropped = true;
            continue;
        }
        if (s->bytesPending() > kMaxPendingBytes) {
            // A reader that stopped reading: cut it instead of buffering without bound.
            s->abortConnection();
            dropped = true;
            continue;
        }
        s->writeSseEvent(name, data);
    }
    if (dropped)
        prune();
}

void ControlEventStream::heartbeat() {
    for (const auto &s : std::as_const(m_subscribers))
        if (s && !s->isClientGone() && !s->isFinished())
            s->writeChunk(QByteArrayLiteral(": heartbeat\n\n"));
    prune();
}

} // namespace loopscope
