#include "record/flowstore.h"

#include "inspect/eventbus.h"
#include "record/flowrecorder.h"
#include "record/storedatabase.h"
#include "record/storewriter.h"

#include <QMetaMethod>
#include <QSet>
#include <QStandardPaths>

namespace loopscope {

namespace {

// Run keys reloaded at start: enough for any run still going on after a restart.
constexpr int kSeededRunKeys = 50000;

} // namespace

namespace {

// Runs fn on `thread` (through `context`, which lives there) and returns its result; directly
// when already there.
template<typename Fn> auto onThread(QThread *thread, QObject *context, Fn fn) {
    using Result = decltype(fn());
    if (QThread::currentThread() == thread)
        return fn();
    Result result{};
    QMetaObject::invokeMethod(
        context, [&result, &fn] { result = fn(); }, Qt::BlockingQueuedConnection);
    return result;
}

} // namespace

FlowStore::FlowStore(FlowStoreOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options)) {
    m_thread.setObjectName(QStringLiteral("loopscope-store"));
    m_writerThread.setObjectName(QStringLiteral("loopscope-writer"));
    // The store's threads run at normal priority and give way to woken proxy threads by
    // yielding between events and rows (CooperativeYield in FlowRecorder and StoreWriter). They
    // ran at nice 5 and 10 before: that did not stop a woken proxy thread from waiting out their
    // slice, and it left the writer a tenth of a core when the machine was busy, so at 2,000
    // flows/s it fell 18,000 flows behind (bench_record --sustained, docs/benchmarks.md).
    if (!m_options.inMemory && m_options.path.isEmpty())
        m_options.path = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                         QStringLiteral("/history.sqlite3");
}

FlowStore::~FlowStore() {
    // A pass-through answered just before the stop is recorded whole, not failed half-built.
    waitForPublishers();
    if (m_thread.isRunning() && m_recorder) {
        // Running flows become failed rows first, then the writer commits them and closes.
        QMetaObject::invokeMethod(
            m_recorder,
            [this] {
                m_recorder->drainIntake();
                m_recorder->finishAll(QStringLiteral("loopscope stopped"));
                delete m_recorder;
                m_recorder = nullptr;
            },
            Qt::BlockingQueuedConnection);
    }
    if (m_writerThread.isRunning() && m_writer) {
        QMetaObject::invokeMethod(
            m_writer,
            [this] {
                m_writer->commit();
                delete m_writer;
                m_writer = nullptr;
                m_db->closeWriter();
            },
            Qt::BlockingQueuedConnection);
    }
    m_thread.quit();
    m_writerThread.quit();
    m_thread.wait();
    m_writerThread.wait();
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
    m_writerThread.start();
    m_thread.start();
    auto *writerAnchor = new QObject;
    writerAnchor->moveToThread(&m_writerThread);
    bool ok = false;
    QList<QPair<QString, QString>> runKeys;
    QMetaObject::invokeMethod(
        writerAnchor,
        [this, &ok, &runKeys, error] {
            if (!m_db->openWriter(error))
                return;
            m_writer = new StoreWriter(m_db.get(), m_options.batchIntervalMs, m_options.maxDays,
                                       m_options.maxBytes, m_options.idleCheckpointMs);
            m_writer->setMaxUnwritten(m_options.maxUnwrittenFlows);
            runKeys = m_writer->recentRunKeys(kSeededRunKeys);
            m_writer->applyRetention();
            ok = true;
        },
        Qt::BlockingQueuedConnection);
    writerAnchor->deleteLater(); // on the writer thread, where it lives
    if (!ok) {
        m_thread.quit();
        m_writerThread.quit();
        m_thread.wait();
        m_writerThread.wait();
        m_db.reset();
        return false;
    }
    auto *anchor = new QObject;
    anchor->moveToThread(&m_thread);
    QMetaObject::invokeMethod(
        anchor,
        [this, &runKeys] {
            m_recorder = new FlowRecorder(m_writer, m_options.prices);
            m_recorder->setObserved([this] { return hasLiveObservers(); });
            m_recorder->seedRunKeys(runKeys);
        },
        Qt::BlockingQueuedConnection);
    anchor->deleteLater();
    // Queued (the two live on different threads): the pending copies go once committed.
    connect(m_writer, &StoreWriter::committed, m_recorder, &FlowRecorder::onCommitted);
    connect(m_recorder, &FlowRecorder::flowStarted, this, &FlowStore::flowStarted,
            Qt::DirectConnection);
    connect(m_recorder, &FlowRecorder::flowUpdated, this, &FlowStore::flowUpdated,
            Qt::DirectConnection);
    connect(m_recorder, &FlowRecorder::flowFinished, this, &FlowStore::flowFinished,
            Qt::DirectConnection);
    connect(m_writer, &StoreWriter::writeProblemChanged, this, &FlowStore::writeProblemChanged,
            Qt::DirectConnection);
    m_query = std::make_unique<FlowQuery>(m_db.get(), m_recorder);
    return true;
}

void FlowStore::attach(EventBus *bus) {
    if (!bus || !m_recorder)
        return;
    // Bodies and chunks (`raw`) reach the recorder unmasked; it masks them with the bus's policy.
    m_recorder->setCredentials(bus->credentials());
    m_recorder->setDropCounter(bus->dropCounter(QStringLiteral("recorder")));
    // Direct: take() is thread-safe and queues for the store thread itself.
    connect(bus, &EventBus::eventPublished, m_recorder, &FlowRecorder::take, Qt::DirectConnection);
    m_bus = bus;
}

void FlowStore::waitForPublishers() {
    // A pass-through's events are built on the bus's thread after its answer went out:
    // "published before this call" includes them.
    if (EventBus *bus = m_bus.data())
        bus->waitForDeferred();
}

int FlowStore::clear() {
    if (!m_recorder)
        return 0;
    waitForPublishers();
    // Events already queued are folded in first, so their flows are cleared too.
    onThread(&m_thread, m_recorder, [this] {
        m_recorder->drainIntake();
        return 0;
    });
    const int removed = onThread(&m_writerThread, m_writer, [this] { return m_writer->clear(); });
    onThread(&m_thread, m_recorder, [this] {
        m_recorder->drainIntake();
        m_recorder->clearFinished();
        return 0;
    });
    return removed;
}

int FlowStore::remove(const QStringList &ids) {
    if (!m_recorder)
        return 0;
    waitForPublishers();
    // Events already queued are folded in first (as for clear), then the writer deletes.
    onThread(&m_thread, m_recorder, [this] {
        m_recorder->drainIntake();
        return 0;
    });
    return onThread(&m_writerThread, m_writer, [this, &ids] { return m_writer->remove(ids); });
}

int FlowStore::importFlows(const QList<QJsonObject> &fullFlows) {
    if (!m_recorder)
        return 0;
    waitForPublishers();
    // Which ids the file holds already, in one call to the writer thread (not one per flow).
    const QSet<QString> present = onThread(&m_writerThread, m_writer, [this, &fullFlows] {
        QSet<QString> ids;
        for (const QJsonObject &flow : fullFlows)
            if (const QString id = flow.value(QStringLiteral("id")).toString();
                !id.isEmpty() && m_writer->exists(id))
                ids.insert(id);
        return ids;
    });
    const int count = onThread(&m_thread, m_recorder, [this, &fullFlows, &present] {
        m_recorder->drainIntake();
        return m_recorder->importFlows(
            fullFlows, [&present](const QString &id) { return present.contains(id); });
    });
    flush();
    return count;
}

void FlowStore::flush() {
    if (!m_recorder)
        return;
    waitForPublishers();
    // 1. every event queued before now is folded in (finished flows are enqueued);
    onThread(&m_thread, m_recorder, [this] {
        m_recorder->drainIntake();
        return 0;
    });
    // 2. the writer commits them;
    onThread(&m_writerThread, m_writer, [this] { return m_writer->commit(); });
    // 3. the recorder has taken the committed() call posted by 2 (no stale pending copies).
    onThread(&m_thread, m_recorder, [this] {
        m_recorder->drainIntake();
        return 0;
    });
}

void FlowStore::applyRetention() {
    if (!m_writer)
        return;
    flush();
    onThread(&m_writerThread, m_writer, [this] { return m_writer->applyRetention(); });
}

bool FlowStore::hasLiveObservers() const {
    // Any thread may (dis)connect; isSignalConnected is the lock-free check emit uses.
    return isSignalConnected(QMetaMethod::fromSignal(&FlowStore::flowStarted)) ||
           isSignalConnected(QMetaMethod::fromSignal(&FlowStore::flowUpdated));
}

QString FlowStore::writeProblem() const {
    return m_writer ? m_writer->writeProblem() : QString();
}

void FlowStore::failWritesForTests(bool fail) {
    if (m_writer)
        onThread(&m_writerThread, m_writer, [this, fail] {
            m_writer->setFailWrites(fail);
            return 0;
        });
}

FlowStoreCounters FlowStore::counters() const {
    FlowStoreCounters c;
    if (!m_recorder || !m_writer)
        return c;
    c.eventsReceived = m_recorder->eventsReceived();
    c.eventsUnmatched = m_recorder->eventsUnmatched();
    c.flowsWritten = m_writer->rowsWritten();
    c.flowsFailed = m_writer->rowsFailed();
    c.writerQueuedPeak = m_writer->queuedPeak();
    c.retentionPasses = m_writer->retentionPasses();
    c.retentionRemoved = m_writer->retentionRemoved();
    c.idleCheckpoints = m_writer->idleCheckpoints();
    c.idleCheckpointDue = m_writer->idleCheckpointDue();
    c.flowsUnwritten = m_writer->unwritten();
    c.flowsDropped = m_writer->rowsDropped();
    c.writeFailures = m_writer->writeFailures();
    c.intakeDropped = m_recorder->intakeDropped();
    c.sseEventsDropped = m_recorder->sseEventsDropped();
    return c;
}

} // namespace loopscope
