#pragma once

#include <QRandomGenerator>
#include <QSqlDatabase>
#include <QString>

namespace loopscope {

// Reads the SQLite file at `path` the way a test checks what the store wrote: on a connection of
// its own (Qt SQL connections are per thread; the store's are busy on theirs), under a unique
// name, removed afterwards. Returns read(db), or `unreadable` when the file does not open.
template<typename Result, typename Read>
Result readSqliteFile(const QString &path, Result unreadable, Read read) {
    const QString name =
        QStringLiteral("test-read-%1").arg(QRandomGenerator::global()->generate64());
    Result result = std::move(unreadable);
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        if (db.open())
            result = read(db);
    }
    QSqlDatabase::removeDatabase(name);
    return result;
}

} // namespace loopscope
