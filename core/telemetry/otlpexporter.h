#pragma once

#include "telemetry/otlpsettings.h"

#include <QObject>
#include <QThread>

#include <array>

namespace loopscope {

class EventBus;
class FlowStore;
class OtlpSender;

// OTLP/HTTP trace export of finished flows (issue 15): subscribes to the flow store's
// flowFinished and to the event bus's sandbox events, and hands both to an OtlpSender on its
// own thread, so building, encoding, batching and a slow or dead collector cost the proxy
// nothing. Destroy it before the store; the destructor sends what is queued (2 s at most).
class OtlpExporter : public QObject {
    Q_OBJECT
public:
    OtlpExporter(const OtlpSettings &settings, FlowStore *store, EventBus *events,
                 QObject *parent = nullptr);
    ~OtlpExporter() override;

    qint64 exportedSpans() const;
    qint64 droppedSpans() const;

private:
    QThread m_thread;
    OtlpSender *m_sender;
    std::array<QMetaObject::Connection, 2> m_offers; // direct connections into the sender
};

} // namespace loopscope
