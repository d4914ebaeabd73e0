#include "telemetry/otlpexporter.h"

#include "inspect/eventbus.h"
#include "record/flowstore.h"
#include "telemetry/otlpsender.h"

#include <QCoreApplication>
#include <QDebug>

namespace loopscope {

OtlpExporter::OtlpExporter(const OtlpSettings &settings, FlowStore *store, EventBus *events,
                           QObject *parent)
    : QObject(parent) {
    OtlpResource resource;
    resource.serviceVersion = QCoreApplication::applicationVersion();
    m_sender = new OtlpSender(settings, resource, store ? store->query() : nullptr);
    if (events) {
        m_sender->setCredentials(events->credentials());
        m_sender->setDropCounters(events->dropCounter(QStringLiteral("otlp")),
                                  events->dropCounter(QStringLiteral("otlp_flows")));
    }
    m_sender->moveToThread(&m_thread);
    m_thread.setObjectName(QStringLiteral("loopscope-otlp"));
    connect(&m_thread, &QThread::started, m_sender, &OtlpSender::start);
    // Direct, into the sender's bounded queues (one posted call per batch, not per event):
    // a queued connection posted every event of the bus (bodies, SSE chunks) to this thread,
    // which reads only sandbox events, without limit.
    OtlpSender *sender = m_sender;
    if (store)
        m_offers[0] = connect(
            store, &FlowStore::flowFinished, sender,
            [sender](const QJsonObject &summary) { sender->offerFlow(summary); },
            Qt::DirectConnection);
    if (events)
        m_offers[1] = connect(
            events, &EventBus::eventPublished, sender,
            [sender](const InspectorEvent &event) { sender->offerEvent(event); },
            Qt::DirectConnection);
    m_thread.start(QThread::LowPriority);
    qInfo().noquote() << QStringLiteral("loopscope: exporting traces to %1 (%2%3)")
                             .arg(settings.url(), OtlpSettings::protocolName(settings.protocol),
                                  settings.captureContent ? QStringLiteral(", with contents")
                                                          : QString());
}

OtlpExporter::~OtlpExporter() {
    for (const QMetaObject::Connection &c : m_offers)
        disconnect(c); // no publisher offers to the sender once it is going
    QMetaObject::invokeMethod(m_sender, "shutdown", Qt::BlockingQueuedConnection, Q_ARG(int, 2000));
    m_thread.quit();
    m_thread.wait();
    delete m_sender;
}

qint64 OtlpExporter::exportedSpans() const {
    return m_sender->exportedSpans();
}

qint64 OtlpExporter::droppedSpans() const {
    return m_sender->droppedSpans();
}

} // namespace loopscope
