// HistoryCommands: the window's history actions without the window (issue 30), over a REAL
// in-memory FlowStore fed the events core publishes, with real files in a temporary directory.
#include "models/flowqueryclient.h"
#include "models/historycommands.h"
#include "models/storeflows.h"

#include <QFile>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

using namespace loopscope;
namespace sf = loopscope::storeflows;

namespace {

template<class T> T await(const QFuture<T> &future) {
    QFuture<T> f = future;
    f.waitForFinished();
    return f.result();
}

int harEntries(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return -1;
    return int(QJsonDocument::fromJson(file.readAll())
                   .object()
                   .value(QStringLiteral("log"))
                   .toObject()
                   .value(QStringLiteral("entries"))
                   .toArray()
                   .size());
}

} // namespace

class TestHistoryCommands : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    EventBus m_bus;
    std::unique_ptr<FlowStore> m_store;
    std::unique_ptr<FlowQueryClient> m_client;
    std::unique_ptr<HistoryCommands> m_history;

    QString path(const QString &name) const { return m_dir.filePath(name); }

private slots:
    void init() {
        QVERIFY(m_dir.isValid());
        m_store = sf::openInMemoryStore(&m_bus);
        QVERIFY(m_store);
        sf::completedFlow(m_bus, QStringLiteral("req_1"));
        sf::codeErrorFlow(m_bus, QStringLiteral("req_2"));
        sf::completedFlow(m_bus, QStringLiteral("req_3"), QStringLiteral("gpt-5"));
        m_store->flush();
        m_client = std::make_unique<FlowQueryClient>();
        m_client->setFlowStore(m_store.get());
        m_history = std::make_unique<HistoryCommands>(m_client.get());
    }
    void cleanup() {
        m_history.reset();
        m_client.reset(); // its pool's read connections end before the store
        m_store.reset();
    }

    void exportWritesTheChosenFlows() {
        const QString base = QStringLiteral("http://127.0.0.1:4000");
        HistoryCommands::Result one = await(m_history->exportHar(
            {QStringLiteral("req_3")}, {}, path(QStringLiteral("one.har")), base, {}));
        QVERIFY2(one.ok(), qPrintable(one.error));
        QCOMPARE(one.count, 1);
        QCOMPARE(harEntries(path(QStringLiteral("one.har"))), 1);

        HistoryCommands::Result all =
            await(m_history->exportHar({}, {}, path(QStringLiteral("all.har")), base, {}));
        QVERIFY2(all.ok(), qPrintable(all.error));
        QCOMPARE(all.count, 3);
        QCOMPARE(harEntries(path(QStringLiteral("all.har"))), 3);
    }

    void exportFailuresSayWhyAndWriteNothing_data() {
        QTest::addColumn<QStringList>("ids");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("error");
        QTest::newRow("unknown flow")
            << QStringList{QStringLiteral("req_nope")} << QStringLiteral("none.har")
            << QStringLiteral("No flows to export.");
        QTest::newRow("unwritable") << QStringList{} << QStringLiteral("missing-dir/all.har")
                                    << QStringLiteral("Cannot write");
    }
    void exportFailuresSayWhyAndWriteNothing() {
        QFETCH(QStringList, ids);
        QFETCH(QString, file);
        QFETCH(QString, error);
        const HistoryCommands::Result done =
            await(m_history->exportHar(ids, {}, path(file), QStringLiteral("http://x"), {}));
        QVERIFY(!done.ok());
        QCOMPARE(done.count, 0);
        QVERIFY2(done.error.startsWith(error), qPrintable(done.error));
        QVERIFY(!QFile::exists(path(file)));
    }

    void clearThenImportBringsTheFlowsBack() {
        QVERIFY(await(m_history->exportHar({}, {}, path(QStringLiteral("all.har")),
                                           QStringLiteral("http://x"), {}))
                    .ok());
        QCOMPARE(await(m_history->count()), 3);
        const HistoryCommands::Result cleared = await(m_history->clear());
        QVERIFY2(cleared.ok(), qPrintable(cleared.error));
        QCOMPARE(cleared.count, 3);
        QCOMPARE(await(m_history->count()), 0);

        const HistoryCommands::Result imported =
            await(m_history->importHar(path(QStringLiteral("all.har"))));
        QVERIFY2(imported.ok(), qPrintable(imported.error));
        QCOMPARE(imported.count, 3);
        m_store->flush();
        QCOMPARE(await(m_history->count()), 3);
    }

    void aBadFileChangesNothing_data() {
        QTest::addColumn<QByteArray>("content"); // empty: no file at all
        QTest::newRow("not JSON") << QByteArray("{ this is not a HAR");
        QTest::newRow("no log") << QByteArray("{\"entries\":[]}");
        QTest::newRow("missing file") << QByteArray();
    }
    void aBadFileChangesNothing() {
        QFETCH(QByteArray, content);
        const QString bad = path(QStringLiteral("bad.har"));
        QFile::remove(bad);
        if (!content.isEmpty()) {
            QFile file(bad);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(content);
        }
        const HistoryCommands::Result done = await(m_history->importHar(bad));
        QVERIFY(!done.ok());
        QCOMPARE(done.count, 0);
        m_store->flush();
        QCOMPARE(await(m_history->count()), 3);
    }

    void removeTakesOneStoredFlow() {
        const HistoryCommands::Result removed = await(m_history->remove(QStringLiteral("req_2")));
        QVERIFY2(removed.ok(), qPrintable(removed.error));
        QCOMPARE(removed.count, 1);
        QCOMPARE(await(m_history->count()), 2);
        const HistoryCommands::Result again = await(m_history->remove(QStringLiteral("req_2")));
        QVERIFY(!again.ok());
        QVERIFY2(again.error.contains(QStringLiteral("req_2")), qPrintable(again.error));
    }

    void editAndResendStartsFromTheClientBody() {
        const QJsonObject body = await(m_history->clientRequestBody(QStringLiteral("req_3")));
        QCOMPARE(body.value(QStringLiteral("model")).toString(), QStringLiteral("gpt-5"));
        QVERIFY(await(m_history->clientRequestBody(QStringLiteral("req_nope"))).isEmpty());
    }

    void withoutAHistoryEveryActionSaysSo() {
        FlowQueryClient none;
        HistoryCommands history(&none);
        QVERIFY(!await(history.exportHar({}, {}, path(QStringLiteral("x.har")),
                                         QStringLiteral("http://x"), {}))
                     .ok());
        QVERIFY(!await(history.importHar(path(QStringLiteral("x.har")))).ok());
        QVERIFY(!await(history.clear()).ok());
        QVERIFY(!await(history.remove(QStringLiteral("req_1"))).ok());
        QCOMPARE(await(history.count()), 0);
        QVERIFY(!QFile::exists(path(QStringLiteral("x.har"))));
    }
};

QTEST_GUILESS_MAIN(TestHistoryCommands)
#include "tst_historycommands.moc"
