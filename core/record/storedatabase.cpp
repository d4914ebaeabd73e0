#include "record/storedatabase.h"

#include "record/recordedflow.h"
#include "record/storedblob.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QUuid>

#include <atomic>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loopscope {

namespace {

// Creates `path` (empty: SQLite takes it as a new database) or tightens it, with its side files,
// to 0600.
void createPrivately(const QString &path) {
    const QByteArray name = QFile::encodeName(path);
    const int fd = ::open(name.constData(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        ::fchmod(fd, 0600);
        ::close(fd);
    }
    for (const char *suffix : {"-wal", "-shm", "-journal"}) {
        const QByteArray side = name + suffix;
        ::chmod(side.constData(), 0600); // ENOENT when there is none: fine
    }
}

std::atomic<int> g_nextStore{1};

bool exec(QSqlDatabase db, const QString &sql, QString *error) {
    QSqlQuery q(db);
    if (q.exec(sql))
        return true;
    if (error)
        *error = QStringLiteral("%1 (%2)").arg(q.lastError().text(), sql.left(60));
    return false;
}

// The file is checked in full only while small; a big history relies on the write path (WAL,
// synchronous=NORMAL) never corrupting it, and start-up stays under a second.
constexpr qint64 kQuickCheckMaxBytes = 64LL * 1024 * 1024;
constexpr int kWriterCacheKiB =
    16 * 1024; // the write connection's page cache (SQLite default: 2 MB)
// WAL pages before SQLite checkpoints by itself (its default: 1,000, ~4 MB). A checkpoint ends
// in fsync, and on this VM each one delayed the proxy's requests around it (bench_record: the
// file store's SSE p99 +0.1 to +0.46 ms over the in-memory one; with synchronous=OFF or no
// checkpoints, the same as an identical in-memory control). The writer checkpoints in pauses of
// the traffic (StoreWriter); this is the bound under traffic that never pauses, and each page is
// written to the database once per checkpoint instead of once per 4 MB of WAL.
constexpr int kWalCheckpointPages = 10000;
constexpr qint64 kWalSizeLimitBytes = 48LL * 1024 * 1024; // the WAL shrinks back to this

} // namespace

StoreDatabase::StoreDatabase(QString path, bool inMemory)
    : m_path(std::move(path))
    , m_inMemory(inMemory) {
    const int n = g_nextStore.fetch_add(1);
    m_prefix = QStringLiteral("loopscope-store-%1-%2")
                   .arg(n)
                   .arg(QUuid::createUuid().toString(QUuid::Id128).left(8));
    m_writerName = m_prefix + QStringLiteral("-writer");
    if (m_inMemory)
        m_uri = QStringLiteral("file:%1?mode=memory&cache=shared").arg(m_prefix);
}

StoreDatabase::~StoreDatabase() {
    QMutexLocker lock(&m_mutex);
    for (const QString &name : std::as_const(m_readers))
        QSqlDatabase::removeDatabase(name);
    m_readers.clear();
    lock.unlock();
    closeWriter();
}

QSqlDatabase StoreDatabase::open(const QString &connection, bool readOnly) const {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
    QStringList options{QStringLiteral("QSQLITE_BUSY_TIMEOUT=10000")};
    if (m_inMemory) {
        db.setDatabaseName(m_uri);
        options << QStringLiteral("QSQLITE_OPEN_URI");
    } else {
        db.setDatabaseName(m_path);
        if (readOnly)
            options << QStringLiteral("QSQLITE_OPEN_READONLY");
    }
    db.setConnectOptions(options.join(u';'));
    db.open();
    if (readOnly && m_inMemory)
        QSqlQuery(db).exec(QStringLiteral("PRAGMA read_uncommitted=1"));
    return db;
}

QString StoreDatabase::placeholders(qsizetype n) {
    QStringList marks;
    marks.fill(QStringLiteral("?"), n);
    return marks.join(u',');
}

QSqlDatabase StoreDatabase::writer() const {
    return QSqlDatabase::database(m_writerName, false);
}

void StoreDatabase::closeWriter() {
    if (!QSqlDatabase::contains(m_writerName))
        return;
    {
        QSqlDatabase db = QSqlDatabase::database(m_writerName, false);
        if (db.isOpen() && !m_inMemory)
            QSqlQuery(db).exec(QStringLiteral("PRAGMA wal_checkpoint(PASSIVE)"));
        db.close();
    }
    QSqlDatabase::removeDatabase(m_writerName);
}

QSqlDatabase StoreDatabase::reader() {
    QThread *thread = QThread::currentThread();
    QMutexLocker lock(&m_mutex);
    const auto it = m_readers.constFind(thread);
    if (it != m_readers.constEnd())
        return QSqlDatabase::database(it.value(), false);
    const QString name = m_prefix + QStringLiteral("-reader-%1").arg(m_readers.size() + 1);
    m_readers.insert(thread, name);
    // The connection belongs to the thread: close it there when the thread ends.
    QObject::connect(
        thread, &QThread::finished, thread,
        [this, thread, name] {
            QMutexLocker inner(&m_mutex);
            if (m_readers.value(thread) != name)
                return;
            m_readers.remove(thread);
            QSqlDatabase::removeDatabase(name);
        },
        Qt::DirectConnection);
    return open(name, true);
}

bool StoreDatabase::createSchemaV1(QSqlDatabase db, QString *error) {
    const QStringList statements{
        QStringLiteral("PRAGMA auto_vacuum=INCREMENTAL"),
        QStringLiteral("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)"),
        QStringLiteral("CREATE TABLE flows(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, "
                       "started_at INTEGER NOT NULL, run_id TEXT, session_id TEXT, state TEXT, "
                       "status INTEGER, model TEXT, path TEXT, summary BLOB NOT NULL, hops BLOB, "
                       "bytes INTEGER NOT NULL DEFAULT 0)"),
        QStringLiteral("CREATE INDEX flows_started ON flows(started_at)"),
        QStringLiteral("CREATE INDEX flows_run ON flows(run_id)"),
        QStringLiteral("CREATE INDEX flows_session ON flows(session_id)"),
        QStringLiteral("CREATE TABLE runs(id TEXT PRIMARY KEY, started_at INTEGER, last_at "
                       "INTEGER, flow_count INTEGER, input_tokens INTEGER, output_tokens "
                       "INTEGER, total_tokens INTEGER, cost_usd REAL, cost_known INTEGER, "
                       "code_runs INTEGER)"),
        QStringLiteral("CREATE INDEX runs_last ON runs(last_at)"),
        QStringLiteral("CREATE VIRTUAL TABLE flows_fts USING fts5(body)"),
        QStringLiteral("INSERT INTO meta(key, value) VALUES('app', 'loopscope')"),
        QStringLiteral("INSERT INTO meta(key, value) VALUES('schema_version', '1')")};
    for (const QString &sql : statements)
        if (!exec(db, sql, error))
            return false;
    return true;
}

QString StoreDatabase::searchTextOfRow(const QByteArray &summary,
                                       const QByteArray &compressedHops) {
    const QJsonArray hops =
        compressedHops.isEmpty()
            ? QJsonArray()
            : QJsonDocument::fromJson(StoredBlob::decompress(compressedHops)).array();
    return RecordedFlow::searchTextOfStored(QJsonDocument::fromJson(summary).object(), hops);
}

QVariant StoreDatabase::searchValue(const QString &text) {
    if (!QStringView(text).isValidUtf16())
        return text;
    return text.toUtf8();
}

const char StoreDatabase::kIndexRowSql[] = "INSERT INTO flows_fts(rowid, body) VALUES(?, ?)";
const char StoreDatabase::kUnindexRowSql[] =
    "INSERT INTO flows_fts(flows_fts, rowid, body) VALUES('delete', ?, ?)";

bool StoreDatabase::runSearchStatement(QSqlQuery &prepared, qint64 seq, const QByteArray &summary,
                                       const QByteArray &compressedHops) {
    prepared.addBindValue(seq);
    prepared.addBindValue(searchValue(searchTextOfRow(summary, compressedHops)));
    return prepared.exec();
}

namespace {

// 2 → 3: the full-text index keeps no copy of the text it indexes (content=''): the copy was
// most of the file (a 1 MB body or stream stored its text uncompressed, beside its compressed
// hops) and most of the writer's work. Each stored flow is indexed again with the text derived
// from its row, the text a later delete derives.
bool makeSearchIndexContentless(QSqlDatabase db, QString *error) {
    if (!exec(db, QStringLiteral("DROP TABLE flows_fts"), error) ||
        !exec(db, QStringLiteral("CREATE VIRTUAL TABLE flows_fts USING fts5(body, content='')"),
              error))
        return false;
    QSqlQuery rows(db);
    rows.setForwardOnly(true);
    if (!rows.exec(QStringLiteral("SELECT seq, summary, hops FROM flows"))) {
        if (error)
            *error = rows.lastError().text();
        return false;
    }
    QSqlQuery index(db);
    index.prepare(QLatin1String(StoreDatabase::kIndexRowSql));
    qint64 count = 0;
    while (rows.next()) {
        if (!StoreDatabase::runSearchStatement(index, rows.value(0).toLongLong(),
                                               rows.value(1).toByteArray(),
                                               rows.value(2).toByteArray())) {
            if (error)
                *error = index.lastError().text();
            return false;
        }
        ++count;
    }
    if (count > 0)
        qInfo().noquote() << QStringLiteral("loopscope: history: indexed %1 flow(s) again for "
                                            "search (schema 3: the index keeps no copy of them)")
                                 .arg(count);
    return true;
}

// 3 → 4: a row's `bytes` counts its share of the index instead of its text in full
// (StoreDatabase::storedBytes). Schema 3 wrote summary + hops + text, so the text's length is
// what is left after the two columns. length() of a blob reads no content.
bool countIndexShareOnly(QSqlDatabase db, QString *error) {
    return exec(db,
                QStringLiteral("UPDATE flows SET bytes = length(summary) + "
                               "coalesce(length(hops), 0) + max(0, bytes - length(summary) - "
                               "coalesce(length(hops), 0)) / %1")
                    .arg(StoreDatabase::kIndexBytesPerTextChar),
                error);
}

} // namespace

int StoreDatabase::schemaVersion(QSqlDatabase db) {
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("SELECT value FROM meta WHERE key='schema_version'")) || !q.next())
        return -1;
    return q.value(0).toInt();
}

bool StoreDatabase::migrate(QSqlDatabase db, int from, QString *error) {
    if (!db.transaction()) {
        if (error)
            *error = db.lastError().text();
        return false;
    }
    bool ok = true;
    if (from < 1)
        ok = createSchemaV1(db, error);
    // 1 → 2: runs count client-side tool calls; run keys persist so runs continue after a
    // restart.
    if (ok && from < 2) {
        ok = exec(db,
                  QStringLiteral("ALTER TABLE runs ADD COLUMN tool_calls INTEGER NOT NULL "
                                 "DEFAULT 0"),
                  error) &&
             exec(db,
                  QStringLiteral("CREATE TABLE run_keys(key TEXT PRIMARY KEY, run_id TEXT NOT "
                                 "NULL, at INTEGER NOT NULL)"),
                  error) &&
             exec(db, QStringLiteral("CREATE INDEX run_keys_at ON run_keys(at)"), error);
    }
    if (ok && from < 3)
        ok = makeSearchIndexContentless(db, error);
    if (ok && from < 4)
        ok = countIndexShareOnly(db, error);
    if (ok)
        ok = exec(db,
                  QStringLiteral("UPDATE meta SET value='%1' WHERE key='schema_version'")
                      .arg(kSchemaVersion),
                  error);
    if (!ok) {
        db.rollback();
        return false;
    }
    return db.commit();
}

// Opens the writer and checks the file; `problem` says why it is unusable (then the caller
// moves it aside), `error` why even trying failed.
bool StoreDatabase::prepare(QString *problem, QString *error) {
    if (!m_inMemory) {
        QFile file(m_path);
        if (file.exists() && file.size() > 0) {
            if (!file.open(QIODevice::ReadOnly)) {
                *error = QStringLiteral("cannot read %1: %2").arg(m_path, file.errorString());
                return false;
            }
            const QByteArray magic = file.read(16);
            if (magic != QByteArray("SQLite format 3\0", 16)) {
                *problem = QStringLiteral("not a SQLite database");
                return false;
            }
        }
    }
    QSqlDatabase db = open(m_writerName, false);
    if (!db.isOpen()) {
        *problem = db.lastError().text();
        return false;
    }
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master")) || !q.next()) {
        *problem = q.lastError().text();
        return false;
    }
    const int objects = q.value(0).toInt();
    int version = 0;
    if (objects > 0) {
        if (!q.exec(QStringLiteral("SELECT value FROM meta WHERE key='app'")) || !q.next() ||
            q.value(0).toString() != QLatin1String("loopscope")) {
            *problem = QStringLiteral("not a Loopscope history (another program's database)");
            return false;
        }
        version = schemaVersion(db);
        if (version > kSchemaVersion) {
            *problem = QStringLiteral("written by a newer Loopscope (schema %1, this one knows %2)")
                           .arg(version)
                           .arg(kSchemaVersion);
            return false;
        }
    }
    // Identity first, then WAL: switching the journal mode rewrites the header, and a file
    // that is not ours must be moved aside exactly as it was.
    if (!m_inMemory) {
        if (QFileInfo(m_path).size() <= kQuickCheckMaxBytes) {
            if (!q.exec(QStringLiteral("PRAGMA quick_check(1)")) || !q.next()) {
                *problem = q.lastError().text();
                return false;
            }
            if (q.value(0).toString() != QLatin1String("ok")) {
                *problem = QStringLiteral("integrity check failed: ") + q.value(0).toString();
                return false;
            }
        }
        if (!q.exec(QStringLiteral("PRAGMA journal_mode=WAL")) || !q.next()) {
            *problem = q.lastError().text();
            return false;
        }
        // WAL + NORMAL: a killed process loses nothing committed; only power loss could.
        q.exec(QStringLiteral("PRAGMA synchronous=NORMAL"));
        // The writer walks the id, time and full-text indexes for every row; with SQLite's
        // default 2 MB cache it re-read their pages from the OS at every batch (a third of
        // its CPU in pread at 2,000 flows/s over a 100,000-flow history). Bounded, so RSS
        // levels off once it is warm.
        q.exec(QStringLiteral("PRAGMA cache_size=-%1").arg(kWriterCacheKiB));
        q.exec(QStringLiteral("PRAGMA wal_autocheckpoint=%1").arg(kWalCheckpointPages));
        q.exec(QStringLiteral("PRAGMA journal_size_limit=%1").arg(kWalSizeLimitBytes));
    }
    q.finish(); // a statement still reading would lock the tables a migration drops
    if (version < kSchemaVersion) {
        QString why;
        if (!migrate(db, version, &why)) {
            *problem = QStringLiteral("migration from schema %1 failed: %2").arg(version).arg(why);
            return false;
        }
        if (version > 0)
            qInfo().noquote() << QStringLiteral(
                                     "loopscope: history %1 migrated from schema %2 to %3")
                                     .arg(path())
                                     .arg(version)
                                     .arg(kSchemaVersion);
        // Schema 3 dropped the index's copy of every text, most of a file's pages: the file is
        // written again without them, once (freed pages are otherwise only reused).
        if (version > 0 && version < 3 && !m_inMemory && !q.exec(QStringLiteral("VACUUM")))
            qWarning().noquote() << "loopscope: history: could not compact the migrated file:"
                                 << q.lastError().text();
    }
    return true;
}

bool StoreDatabase::moveAside(const QString &why, QString *error) {
    closeWriter();
    QString reason = why.simplified(); // SQLite's reports span lines; the log line must not
    const QString stamp =
        QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-hhmmss"));
    const QString target = m_path + QStringLiteral(".broken-") + stamp;
    if (QFile::exists(target))
        QFile::remove(target);
    if (!QFile::rename(m_path, target)) {
        if (error)
            *error = QStringLiteral("history %1 is unusable (%2) and could not be moved aside")
                         .arg(m_path, reason);
        return false;
    }
    for (const char *suffix : {"-wal", "-shm"}) {
        const QString side = m_path + QLatin1String(suffix);
        if (QFile::exists(side))
            QFile::rename(side, target + QLatin1String(suffix));
    }
    m_movedAside = target;
    qWarning().noquote() << QStringLiteral("loopscope: history file %1 is unusable (%2): moved it "
                                           "to %3 and started a fresh history")
                                .arg(m_path, reason, target);
    return true;
}

bool StoreDatabase::openWriter(QString *error) {
    if (!m_inMemory) {
        // The history holds every prompt, answer and tool output: only this user may read it,
        // like the control token file. A directory created here is 0700; the database file is
        // created 0600 before SQLite opens it, because SQLite gives its -wal and -shm files the
        // database file's mode. Files of an older install are tightened the same way.
        const QString dir = QFileInfo(m_path).absolutePath();
        const bool existed = QFileInfo::exists(dir);
        if (!QDir().mkpath(dir)) {
            if (error)
                *error = QStringLiteral("cannot create the history directory %1").arg(dir);
            return false;
        }
        if (!existed)
            ::chmod(QFile::encodeName(dir).constData(), 0700);
        createPrivately(m_path);
    }
    QString problem;
    QString failure;
    if (prepare(&problem, &failure))
        return true;
    if (!failure.isEmpty() || m_inMemory) {
        if (error)
            *error = failure.isEmpty() ? problem : failure;
        closeWriter();
        return false;
    }
    if (!moveAside(problem, error))
        return false;
    createPrivately(m_path);
    problem.clear();
    if (prepare(&problem, &failure))
        return true;
    if (error)
        *error = QStringLiteral("cannot create a fresh history at %1: %2")
                     .arg(m_path, failure.isEmpty() ? problem : failure);
    closeWriter();
    return false;
}

} // namespace loopscope
