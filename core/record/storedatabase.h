#pragma once

#include <QHash>
#include <QMutex>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QVariant>

class QThread;

namespace loopscope {

// The SQLite file behind the flow store and its connections (Qt SQL connections are per
// thread): one write connection, opened on the store thread by openWriter(), and one read
// connection per reading thread, opened lazily by reader() and closed when that thread ends.
//
// openWriter() owns the file's life: WAL mode, schema creation, forward migration (schema
// version in table meta), and recovery — a file that is not SQLite, is corrupt, belongs to
// another program or to a newer Loopscope is renamed to "<name>.broken-<time>" with one log
// line, and a fresh store is created in its place.
class StoreDatabase {
public:
    static constexpr int kSchemaVersion = 4;

    // `path` is the SQLite file; inMemory → a private shared-cache in-memory database.
    StoreDatabase(QString path, bool inMemory);
    ~StoreDatabase();
    StoreDatabase(const StoreDatabase &) = delete;
    StoreDatabase &operator=(const StoreDatabase &) = delete;

    bool openWriter(QString *error);
    QSqlDatabase writer() const;
    void closeWriter();
    // This thread's read connection (opened on first use).
    QSqlDatabase reader();
    QString path() const { return m_inMemory ? QStringLiteral(":memory:") : m_path; }
    bool inMemory() const { return m_inMemory; }
    // Where the last unusable file was moved, empty when none (tests, the window's notice).
    QString movedAsidePath() const { return m_movedAside; }

    // "?,?,…,?" for an `IN (…)` list of n bound values; long id lists are bound in chunks of
    // kIdsPerStatement so a statement stays small.
    static QString placeholders(qsizetype n);
    static constexpr int kIdsPerStatement = 500;

    // The text a stored row is indexed by (RecordedFlow::searchTextOfStored) from its summary
    // and compressed hops columns: the full-text index is contentless (schema 3), so this is
    // what takes a row out of it again.
    static QString searchTextOfRow(const QByteArray &summary, const QByteArray &compressedHops);
    // Statements that index a row (rowid, text) or take it out of the index again: a
    // contentless FTS5 table forgets a row only when told the text it indexed (SQLite 3.40 has
    // no contentless_delete). runSearchStatement binds a stored row's seq and derived text.
    static const char kIndexRowSql[];
    static const char kUnindexRowSql[];
    static bool runSearchStatement(QSqlQuery &prepared, qint64 seq, const QByteArray &summary,
                                   const QByteArray &compressedHops);
    // The value those statements bind for a text: its UTF-8 bytes (FTS5 reads a blob as UTF-8
    // text), which spares SQLite converting a UTF-16 string itself, an eighth of recording a
    // large flow. A text holding a lone surrogate is bound as it is: SQLite's own conversion
    // spells one differently than Qt's, and a row is taken out of the index only with the very
    // tokens it went in with (rows indexed before from UTF-16 strings convert to the same bytes
    // otherwise).
    static QVariant searchValue(const QString &text);

    // What a row adds to the file, the `bytes` column `history.max_mb` is counted in (schema
    // 4): its summary, its compressed hops, and its share of the search index, which keeps
    // the terms and their positions but no text: a quarter to a third of the text's size for
    // prose and code (0.23–0.32, bench/record/index_share.py), counted as a third so that the
    // file stays under the limit. Schema 3 counted the text in full, as if it were stored: a
    // 500 MB limit then held a few thousand flows in a file of tens of MB.
    static qint64 storedBytes(qint64 summaryBytes, qint64 compressedHopsBytes,
                              qint64 searchTextChars) {
        return summaryBytes + compressedHopsBytes + searchTextChars / kIndexBytesPerTextChar;
    }
    static constexpr int kIndexBytesPerTextChar = 3; // a divisor: one index byte per 3 chars

    // Test hooks: the version-1 schema as the first release wrote it, and the file's version.
    static bool createSchemaV1(QSqlDatabase db, QString *error);
    static int schemaVersion(QSqlDatabase db);

private:
    QSqlDatabase open(const QString &connection, bool readOnly) const;
    bool prepare(QString *problem, QString *error);
    bool migrate(QSqlDatabase db, int from, QString *error);
    bool moveAside(const QString &reason, QString *error);

    QString m_path;
    bool m_inMemory;
    QString m_uri; // in-memory: the shared-cache URI every connection opens
    QString m_writerName;
    QString m_prefix; // unique per store: connection names
    QString m_movedAside;
    QMutex m_mutex;
    QHash<QThread *, QString> m_readers;
};

} // namespace loopscope
