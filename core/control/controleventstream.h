#pragma once

#include "inspect/inspectorevent.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <optional>
#include <utility>

namespace loopscope {

class ResponseSink;

// GET /loopscope/v1/events: one live SSE stream per subscriber of what the window receives.
// flow.started/updated/finished come from the flow store's summaries; code_run.*, sandbox.*,
// log (and whatever kinds later issues add, e.g. paused/resumed) from InspectorEvents. Every
// data object is snake_case and carries flow_id where the event has one. A ": heartbeat" comment
// keeps idle streams (and proxies in between) alive; a subscriber that stops reading is cut
// rather than buffered without bound. Lives on the proxy thread.
class ControlEventStream : public QObject {
    Q_OBJECT
public:
    static constexpr int kHeartbeatMs = 15000;
    static constexpr int kMaxSubscribers = 64;
    static constexpr qint64 kMaxPendingBytes = 8 * 1024 * 1024;

    explicit ControlEventStream(QObject *parent = nullptr);

    // Starts the SSE answer on `sink` and keeps it until the client leaves or shutdown().
    void subscribe(ResponseSink *sink);
    int subscriberCount() const;
    // Ends every stream cleanly (server shutdown).
    void shutdown();

    // SSE name and data for an InspectorEvent; nullopt for kinds covered by flow.* summaries
    // or internal to the recorder (hop events, response chunks).
    static std::optional<std::pair<QByteArray, QJsonObject>> map(const InspectorEvent &event);
    // camelCase keys → snake_case (top level and nested objects).
    static QJsonObject snakeCase(const QJsonObject &object);

public slots:
    void publishEvent(const loopscope::InspectorEvent &event);
    // `name` is flow.started / flow.updated / flow.finished; `summary` a spec flow summary.
    void publishFlow(const QByteArray &name, const QJsonObject &summary);

signals:
    // The first subscriber came (true) or the last one went (false).
    void subscribersChanged(bool any);

private:
    void broadcast(const QByteArray &name, const QJsonObject &data);
    void heartbeat();
    void prune();
    void announce();

    QList<QPointer<ResponseSink>> m_subscribers;
    bool m_announcedAny = false;
    QTimer m_heartbeat;
};

} // namespace loopscope
