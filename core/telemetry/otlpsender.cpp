#include "telemetry/otlpsender.h"

#include "record/flowquery.h"
#include "telemetry/otlpjsonencoder.h"
#include "telemetry/otlpprotoencoder.h"
#include "telemetry/otlpspanbuilder.h"

#include <QDateTime>
#include <QDebug>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSet>

#include <algorithm>

namespace loopscope {

namespace {

constexpr int kMaxSandboxFlows = 1000;
constexpr int kMaxRetryDelayMs = 60 * 1000;

QString sandboxEventName(InspectorEvent::Kind kind) {
    using Kind = InspectorEvent::Kind;
    switch (kind) {
    case Kind::SandboxCreated:
        return QStringLiteral("loopscope.sandbox.created");
    case Kind::SandboxReused:
        return QStringLiteral("loopscope.sandbox.reused");
    case Kind::SandboxDeleted:
        return QStringLiteral("loopscope.sandbox.deleted");
    case Kind::SandboxEvicted:
        return QStringLiteral("loopscope.sandbox.evicted");
    case Kind::SandboxExpired:
        return QStringLiteral("loopscope.sandbox.expired");
    default:
        return QStringLiteral("loopscope.sandbox.delete_failed");
    }
}

// Retry-After: delta-seconds or an HTTP date; -1 when absent or unreadable.
int retryAfterMs(const QByteArray &value) {
    if (value.isEmpty())
        return -1;
    bool ok = false;
    const int seconds = value.trimmed().toInt(&ok);
    if (ok)
        return seconds < 0 ? -1 : qMin(seconds * 1000, kMaxRetryDelayMs);
    const QDateTime when =
        QDateTime::fromString(QString::fromLatin1(value.trimmed()), Qt::RFC2822Date);
    if (!when.isValid())
        return -1;
    return int(
        std::clamp<qint64>(QDateTime::currentDateTimeUtc().msecsTo(when), 0, kMaxRetryDelayMs));
}

} // namespace

OtlpSender::OtlpSender(const OtlpSettings &settings, const OtlpResource &resource,
                       const FlowQuery *flows)
    : m_settings(settings)
    , m_resource(resource)
    , m_flows(flows)
    , m_events(
          {kMaxQueuedEvents, kMaxQueuedEvents, 0, kMaxQueuedEvents},
          [](const InspectorEvent &e) {
              return e.isSandboxEvent() ? BoundedEventQueue::Weight::Shed
                                        : BoundedEventQueue::Weight::Ignore;
          },
          /*keepRaw=*/false) {
    m_events.setWakeUp([this] {
        QMetaObject::invokeMethod(this, &OtlpSender::drainEvents, Qt::QueuedConnection);
    });
}

void OtlpSender::setDropCounters(std::shared_ptr<std::atomic<quint64>> events,
                                 std::shared_ptr<std::atomic<quint64>> flows) {
    m_events.setDropCounter(std::move(events));
    if (flows)
        m_droppedFlows = std::move(flows);
}

void OtlpSender::offerEvent(const InspectorEvent &event) {
    m_events.push(event);
}

void OtlpSender::drainEvents() {
    for (const InspectorEvent &event : m_events.takeAll())
        inspectorEvent(event);
}

void OtlpSender::offerFlow(const QJsonObject &summary) {
    if (!OtlpSpanBuilder::exports(summary))
        return;
    QMutexLocker lock(&m_flowsMutex);
    if (m_flowIds.size() >= kMaxQueuedFlows) {
        m_droppedFlows->fetch_add(1, std::memory_order_relaxed);
        return;
    }
    m_flowIds.append(summary.value(QStringLiteral("id")).toString());
    if (m_flowIds.size() == 1)
        QMetaObject::invokeMethod(this, &OtlpSender::drainFlows, Qt::QueuedConnection);
}

void OtlpSender::drainFlows() {
    QStringList ids;
    {
        QMutexLocker lock(&m_flowsMutex);
        ids = std::exchange(m_flowIds, {});
    }
    if (m_stopping)
        return;
    for (const QString &id : std::as_const(ids))
        exportFlow(id, 0);
}

OtlpSender::~OtlpSender() = default;

void OtlpSender::start() {
    m_nam = new QNetworkAccessManager(this);
    m_flushTimer = new QTimer(this);
    m_flushTimer->setInterval(kFlushIntervalMs);
    connect(m_flushTimer, &QTimer::timeout, this, &OtlpSender::sendNext);
    m_flushTimer->start();
    m_retryTimer = new QTimer(this);
    m_retryTimer->setSingleShot(true);
    connect(m_retryTimer, &QTimer::timeout, this, &OtlpSender::post);
}

void OtlpSender::flowFinished(const QJsonObject &summary) {
    if (m_stopping || !OtlpSpanBuilder::exports(summary))
        return;
    exportFlow(summary.value(QStringLiteral("id")).toString(), 0);
}

void OtlpSender::exportFlow(const QString &id, int attempt) {
    const auto flow = m_flows ? m_flows->flow(id) : std::nullopt;
    if (!flow) {
        // The store may be between its live copy and the written row: look once more.
        if (attempt < 3)
            QTimer::singleShot(200, this, [this, id, attempt] { exportFlow(id, attempt + 1); });
        return;
    }
    const QJsonObject masked = m_credentials ? m_credentials->maskObject(*flow) : *flow;
    enqueue(OtlpSpanBuilder::build(masked, m_settings.captureContent, sandboxEventsOf(masked)));
}

void OtlpSender::inspectorEvent(const InspectorEvent &event) {
    // Sandbox events carry no flow id: they are kept by container and matched to the code runs
    // of a flow (by container and time) when it finishes.
    const QString container = event.data.value(QStringLiteral("containerId")).toString();
    if (!event.isSandboxEvent() || container.isEmpty() || m_stopping)
        return;
    if (m_sandboxEvents.size() >= kMaxSandboxFlows && !m_sandboxEvents.contains(container))
        m_sandboxEvents.clear(); // old containers; their events are not worth the memory
    QList<OtlpEvent> &events = m_sandboxEvents[container];
    if (events.size() >= 32)
        events.removeFirst();
    QList<OtlpAttribute> attrs{{QStringLiteral("loopscope.container.id"), container},
                               {QStringLiteral("loopscope.sandbox.provider"),
                                event.data.value(QStringLiteral("provider")).toString()},
                               {QStringLiteral("loopscope.sandbox.ephemeral"),
                                event.data.value(QStringLiteral("ephemeral")).toBool()}};
    events.append({event.timestampMs * 1000000, sandboxEventName(event.kind), attrs});
}

QList<OtlpEvent> OtlpSender::sandboxEventsOf(const QJsonObject &flow) const {
    const qint64 from = qint64(flow.value(QStringLiteral("started_at")).toDouble()) * 1000000;
    const qint64 to =
        from + qint64(flow.value(QStringLiteral("duration_ms")).toDouble() * 1e6) + 1000000;
    QList<OtlpEvent> out;
    QSet<QString> seen;
    for (const QJsonValue &h : flow.value(QStringLiteral("hops")).toArray()) {
        const QString container = h.toObject().value(QStringLiteral("container_id")).toString();
        if (container.isEmpty() || seen.contains(container))
            continue;
        seen.insert(container);
        for (const OtlpEvent &e : m_sandboxEvents.value(container))
            if (e.timeUnixNano >= from && e.timeUnixNano <= to)
                out.append(e);
    }
    return out;
}

void OtlpSender::enqueue(const QList<OtlpSpan> &spans) {
    if (spans.isEmpty())
        return;
    if (m_queue.size() + spans.size() > kMaxQueuedSpans) {
        drop(spans.size(), QStringLiteral("the export queue is full (collector slow or down)"));
        return;
    }
    m_queue.append(spans);
    if (m_queue.size() >= kBatchSpans)
        sendNext();
}

void OtlpSender::drop(qint64 spans, const QString &why) {
    const qint64 total = m_dropped.fetch_add(spans) + spans;
    // One line per 10 s at most: a dead collector must not flood the log either.
    if (!m_lastDropLog.isValid() || m_lastDropLog.elapsed() > 10000) {
        m_lastDropLog.start();
        qWarning().noquote() << QStringLiteral("loopscope: otlp: dropped %1 spans: %2 (%3 dropped "
                                               "so far)")
                                    .arg(spans)
                                    .arg(why)
                                    .arg(total);
    }
}

void OtlpSender::sendNext() {
    if (m_inFlight > 0 || m_queue.isEmpty() || !m_nam)
        return;
    const qsizetype n = qMin<qsizetype>(m_queue.size(), kBatchSpans);
    const QList<OtlpSpan> batch = m_queue.mid(0, n);
    m_queue.remove(0, n);
    m_payload = m_settings.protocol == OtlpSettings::Protocol::Json
                    ? OtlpJsonEncoder::encode(batch, m_resource)
                    : OtlpProtoEncoder::encode(batch, m_resource);
    m_inFlight = n;
    m_attempt = 0;
    post();
}

void OtlpSender::post() {
    if (m_inFlight == 0 || !m_nam)
        return;
    ++m_attempt;
    QNetworkRequest request{QUrl(m_settings.url())};
    request.setHeader(QNetworkRequest::ContentTypeHeader,
                      m_settings.protocol == OtlpSettings::Protocol::Json
                          ? QByteArray("application/json")
                          : QByteArray("application/x-protobuf"));
    for (const auto &h : std::as_const(m_settings.headers))
        request.setRawHeader(h.first, h.second);
    request.setTransferTimeout(10000);
    QNetworkReply *reply = m_nam->post(request, m_payload);
    connect(reply, &QNetworkReply::finished, this, [this, reply] { onReply(reply); });
}

void OtlpSender::onReply(QNetworkReply *reply) {
    reply->deleteLater();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status >= 200 && status < 300) {
        m_exported.fetch_add(m_inFlight);
        m_inFlight = 0;
        m_payload.clear();
        if (!m_queue.isEmpty() && !m_stopping)
            QTimer::singleShot(0, this, &OtlpSender::sendNext);
        return;
    }
    const bool retryable =
        status == 0 || status == 429 || status == 502 || status == 503 || status == 504;
    if (retryable && m_attempt < kMaxAttempts && !m_stopping) {
        int delay = retryAfterMs(reply->rawHeader("Retry-After"));
        if (delay < 0)
            delay = qMin(500 << (m_attempt - 1), 30000);
        m_retryTimer->start(delay);
        return;
    }
    const QString why = status == 0 ? QStringLiteral("collector unreachable at %1 (%2)")
                                          .arg(m_settings.url(), reply->errorString())
                                    : QStringLiteral("collector answered HTTP %1: %2")
                                          .arg(status)
                                          .arg(QString::fromUtf8(reply->readAll().left(200)));
    drop(m_inFlight, why);
    m_inFlight = 0;
    m_payload.clear();
}

void OtlpSender::shutdown(int waitMs) {
    if (!m_nam)
        return;
    m_stopping = true;
    m_flushTimer->stop();
    m_retryTimer->stop();
    QEventLoop loop;
    QTimer deadline;
    deadline.setSingleShot(true);
    connect(&deadline, &QTimer::timeout, &loop, &QEventLoop::quit);
    deadline.start(waitMs);
    // What is in flight finishes; what is queued goes in one last batch.
    auto done = [this] { return m_inFlight == 0 && m_queue.isEmpty(); };
    QTimer poll;
    connect(&poll, &QTimer::timeout, &loop, [&] {
        if (m_inFlight == 0 && !m_queue.isEmpty()) {
            const bool wasStopping = m_stopping;
            m_stopping = false;
            sendNext();
            m_stopping = wasStopping;
        }
        if (done())
            loop.quit();
    });
    poll.start(20);
    if (!done())
        loop.exec();
    const qsizetype left = m_queue.size() + m_inFlight;
    if (left > 0)
        drop(left, QStringLiteral("Loopscope stopped before the collector took them"));
    m_queue.clear();
    m_inFlight = 0;
    delete m_nam;
    m_nam = nullptr;
}

} // namespace loopscope
