#pragma once

#include "inspect/boundedeventqueue.h"
#include "inspect/credentialpolicy.h"
#include "inspect/inspectorevent.h"
#include "telemetry/otlpsettings.h"
#include "telemetry/otlpspan.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QMutex>
#include <QObject>
#include <QStringList>
#include <QTimer>

#include <atomic>
#include <memory>

class QNetworkAccessManager;
class QNetworkReply;

namespace loopscope {

class FlowQuery;

// The exporter's worker, on the exporter's own thread: reads each finished flow, builds its
// spans, keeps them in a bounded queue (overflow dropped and counted, never waited for) and
// POSTs batches to the collector, one at a time, retrying 429/5xx and network errors with
// exponential backoff or the collector's Retry-After.
class OtlpSender : public QObject {
    Q_OBJECT
public:
    static constexpr int kMaxQueuedSpans = 4096;
    static constexpr int kBatchSpans = 512;
    static constexpr int kFlushIntervalMs = 1000;
    static constexpr int kMaxAttempts = 6;
    // Sandbox events waiting for this thread (the only events it reads): ~30 s of sandboxes
    // churning at a hundred a second; past it the oldest container's history goes unused.
    static constexpr qsizetype kMaxQueuedEvents = 4096;
    // Finished flows waiting to be read and built into spans: each makes one span or more, so
    // more than the span queue holds would be dropped there anyway.
    static constexpr qsizetype kMaxQueuedFlows = kMaxQueuedSpans;

    OtlpSender(const OtlpSettings &settings, const OtlpResource &resource, const FlowQuery *flows);
    ~OtlpSender() override;
    // Before the thread starts: each flow is masked with this policy (the bus's) before it
    // becomes spans, so a value the store kept is checked against today's secrets as well.
    void setCredentials(std::shared_ptr<const CredentialPolicy> credentials) {
        m_credentials = std::move(credentials);
    }

    qint64 exportedSpans() const { return m_exported.load(); }
    qint64 droppedSpans() const { return m_dropped.load(); }
    // Any thread (the publisher's, through a direct connection): queue a sandbox event or a
    // finished flow for this thread, bounded, each refusal counted in the counter given
    // (the bus's "otlp" / "otlp_flows"; own counters when not set).
    void offerEvent(const loopscope::InspectorEvent &event);
    void offerFlow(const QJsonObject &summary);
    void setDropCounters(std::shared_ptr<std::atomic<quint64>> events,
                         std::shared_ptr<std::atomic<quint64>> flows);
    quint64 droppedEvents() const { return m_events.dropped(); }
    quint64 droppedFlows() const { return m_droppedFlows->load(std::memory_order_relaxed); }

public slots:
    void start();
    void flowFinished(const QJsonObject &summary);
    void inspectorEvent(const loopscope::InspectorEvent &event);
    // Sends what is queued, waiting at most `waitMs` (shutdown); then stops.
    void shutdown(int waitMs);

private:
    void drainEvents();
    void drainFlows();
    void exportFlow(const QString &id, int attempt);
    QList<OtlpEvent> sandboxEventsOf(const QJsonObject &flow) const;
    void enqueue(const QList<OtlpSpan> &spans);
    void sendNext();
    void post();
    void onReply(QNetworkReply *reply);
    void drop(qint64 spans, const QString &why);

    OtlpSettings m_settings;
    OtlpResource m_resource;
    const FlowQuery *m_flows;
    std::shared_ptr<const CredentialPolicy> m_credentials;
    QNetworkAccessManager *m_nam = nullptr;
    QTimer *m_flushTimer = nullptr;
    QTimer *m_retryTimer = nullptr;
    QList<OtlpSpan> m_queue;
    qsizetype m_inFlight = 0; // spans in m_payload (0 = nothing being sent)
    QByteArray m_payload;
    int m_attempt = 0;
    bool m_stopping = false;
    QHash<QString, QList<OtlpEvent>> m_sandboxEvents; // by container id, the latest 32 each
    std::atomic<qint64> m_exported{0};
    std::atomic<qint64> m_dropped{0};
    QElapsedTimer m_lastDropLog;
    BoundedEventQueue m_events;
    QMutex m_flowsMutex; // guards m_flowIds: offered on the store thread
    QStringList m_flowIds;
    std::shared_ptr<std::atomic<quint64>> m_droppedFlows =
        std::make_shared<std::atomic<quint64>>(0);
};

} // namespace loopscope
