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
    if (events)
        m_sender->setCredentials(events->credentials());
    m_sender->moveToThread(&m_thread);
    m_thread.setObjectName(QStringLiteral("loopscope-otlp"));
    connect(&m_thread, &QThread::started, m_sender, &OtlpSender::start);
    if (store)
        connect(store, &FlowStore::flowFinished, m_sender, &OtlpSender::flowFinished,
                Qt::QueuedConnection);
    if (events)
        connect(events, &EventBus::eventPublished, m_sender, &OtlpSender::inspectorEvent,
                Qt::QueuedConnection);
    m_thread.start(QThread::LowPriority);
    qInfo().noquote() << QStringLiteral("loopscope: exporting traces to %1 (%2%3)")
                             .arg(settings.url(), OtlpSettings::protocolName(settings.protocol),
                                  settings.captureContent ? QStringLiteral(", with contents")
                                                          : QString());
}

OtlpExporter::~OtlpExporter() {
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
