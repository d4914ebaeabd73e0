#include "record/flowstore.h"

#include "inspect/eventbus.h"
#include "record/flowrecorder.h"
#include "record/storedatabase.h"
#include "record/storewriter.h"

#include <QStandardPaths>

namespace loopscope {

namespace {

// Run keys reloaded at start: enough for any run still going on after a restart.
constexpr int kSeededRunKeys = 50000;

} // namespace

FlowStore::FlowStore(FlowStoreOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options)) {
    m_thread.setObjectName(QStringLiteral("loopscope-store"));
    if (!m_options.inMemory && m_options.path.isEmpty())
        m_options.path = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                         QStringLiteral("/history.sqlite3");
}

FlowStore::~FlowStore() {
    if (m_thread.isRunning()) {
        QMetaObject::invokeMethod(
            m_recorder,
            [this] {
                m_recorder->finishAll(QStringLiteral("loopscope stopped"));
                m_writer->commit();
                delete m_recorder;
                m_recorder = nullptr;
                delete m_writer;
                m_writer = nullptr;
                m_db->closeWriter();
            },
            Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
    m_query.reset();
    m_db.reset();
}

QString FlowStore::path() const {
    return m_db ? m_db->path() : m_options.path;
}

bool FlowStore::open(QString *error) {
    if (m_db)
        return true;
    m_db = std::make_unique<StoreDatabase>(m_options.path, m_options.inMemory);
    m_thread.start();
    auto *anchor = new QObject;
    anchor->moveToThread(&m_thread);
    bool ok = false;
    QMetaObject::invokeMethod(
        anchor,
        [this, &ok, error] {
            if (!m_db->openWriter(error))
                return;
            m_writer = new StoreWriter(m_db.get(), m_options.batchIntervalMs, m_options.maxDays,
                                       m_options.maxBytes);
            m_recorder = new FlowRecorder(m_writer, m_options.prices);
            connect(m_writer, &StoreWriter::committed, m_recorder, &FlowRecorder::onCommitted);
            m_recorder->seedRunKeys(m_writer->recentRunKeys(kSeededRunKeys));
            m_writer->applyRetention();
            ok = true;
        },
        Qt::BlockingQueuedConnection);
    anchor->deleteLater(); // on the store thread, where it lives
    if (!ok) {
        m_thread.quit();
        m_thread.wait();
        m_db.reset();
        return false;
    }
    connect(m_recorder, &FlowRecorder::flowStarted, this, &FlowStore::flowStarted);
    connect(m_recorder, &FlowRecorder::flowUpdated, this, &FlowStore::flowUpdated);
    connect(m_recorder, &FlowRecorder::flowFinished, this, &FlowStore::flowFinished);
    m_query = std::make_unique<FlowQuery>(m_db.get(), m_recorder);
    return true;
}

void FlowStore::attach(EventBus *bus) {
    if (!bus || !m_recorder)
        return;
    connect(bus, &EventBus::eventPublished, m_recorder, &FlowRecorder::record,
            Qt::QueuedConnection);
}

namespace {

template<typename Fn> auto onStoreThread(QThread *thread, QObject *context, Fn fn) {
    using Result = decltype(fn());
    if (QThread::currentThread() == thread)
        return fn();
    Result result{};
    QMetaObject::invokeMethod(
        context, [&result, &fn] { result = fn(); }, Qt::BlockingQueuedConnection);
    return result;
}

} // namespace

int FlowStore::clear() {
    if (!m_recorder)
        return 0;
    return onStoreThread(&m_thread, m_recorder, [this] {
        const int removed = m_writer->clear();
        m_recorder->clearFinished();
        return removed;
    });
}

int FlowStore::remove(const QStringList &ids) {
    if (!m_recorder)
        return 0;
    return onStoreThread(&m_thread, m_recorder, [this, &ids] { return m_writer->remove(ids); });
}

int FlowStore::importFlows(const QList<QJsonObject> &fullFlows) {
    if (!m_recorder)
        return 0;
    return onStoreThread(&m_thread, m_recorder,
                         [this, &fullFlows] { return m_recorder->importFlows(fullFlows); });
}

void FlowStore::flush() {
    if (!m_recorder)
        return;
    onStoreThread(&m_thread, m_recorder, [this] { return m_writer->commit(); });
}

void FlowStore::applyRetention() {
    if (!m_recorder)
        return;
    onStoreThread(&m_thread, m_recorder, [this] { return m_writer->applyRetention(); });
}

FlowStoreCounters FlowStore::counters() const {
    FlowStoreCounters c;
    if (!m_recorder || !m_writer)
        return c;
    c.eventsReceived = m_recorder->eventsReceived();
    c.eventsUnmatched = m_recorder->eventsUnmatched();
    c.flowsWritten = m_writer->rowsWritten();
    c.flowsFailed = m_writer->rowsFailed();
    return c;
}

} // namespace loopscope
