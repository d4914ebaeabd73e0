#pragma once

#include "inspect/credentialpolicy.h"
#include "inspect/inspectorevent.h"
#include "telemetry/otlpsettings.h"
#include "telemetry/otlpspan.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QObject>
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

    OtlpSender(const OtlpSettings &settings, const OtlpResource &resource, const FlowQuery *flows);
    ~OtlpSender() override;
    // Before the thread starts: each flow is masked with this policy (the bus's) before it
    // becomes spans, so a value the store kept is checked against today's secrets as well.
    void setCredentials(std::shared_ptr<const CredentialPolicy> credentials) {
        m_credentials = std::move(credentials);
    }

    qint64 exportedSpans() const { return m_exported.load(); }
    qint64 droppedSpans() const { return m_dropped.load(); }

public slots:
    void start();
    void flowFinished(const QJsonObject &summary);
    void inspectorEvent(const loopscope::InspectorEvent &event);
    // Sends what is queued, waiting at most `waitMs` (shutdown); then stops.
    void shutdown(int waitMs);

private:
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
};

} // namespace loopscope
