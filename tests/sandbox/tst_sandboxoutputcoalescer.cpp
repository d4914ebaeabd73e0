#include "sandbox/sandboxoutputcoalescer.h"

#include <QTest>

using namespace loopscope;

namespace {
using Chunk = QPair<QString, QString>; // stream, text
}

// The bounds every backend's live output goes through (pure: a QTimer, no processes).
class TestSandboxOutputCoalescer : public QObject {
    Q_OBJECT
private slots:
    void mergesPerStreamInOrderUntilFlushed();
    void fullChunkIsDeliveredAtOnce();
    void quietPiecesArriveAfterTheInterval();
    void capCutsOnACharacterAndSaysSo_data();
    void capCutsOnACharacterAndSaysSo();
    void nothingAfterFinishOrWithoutASink();
};

void TestSandboxOutputCoalescer::mergesPerStreamInOrderUntilFlushed() {
    QList<Chunk> got;
    SandboxOutputCoalescer c([&](const QString &s, const QString &t) { got.append({s, t}); });
    c.add(QStringLiteral("stdout"), QStringLiteral("a"));
    c.add(QStringLiteral("stdout"), QStringLiteral("b"));
    c.add(QStringLiteral("stderr"), QStringLiteral("e"));
    c.add(QStringLiteral("stdout"), QStringLiteral("c"));
    QVERIFY(got.isEmpty()); // coalescing: nothing before the interval or a full chunk
    c.finish();
    QCOMPARE(got, (QList<Chunk>{{QStringLiteral("stdout"), QStringLiteral("ab")},
                                {QStringLiteral("stderr"), QStringLiteral("e")},
                                {QStringLiteral("stdout"), QStringLiteral("c")}}));
}

void TestSandboxOutputCoalescer::fullChunkIsDeliveredAtOnce() {
    QList<Chunk> got;
    SandboxOutputCoalescer::Limits limits;
    limits.chunkBytes = 10;
    limits.intervalMs = 60000; // never by time in this test
    SandboxOutputCoalescer c(
        [&](const QString &s, const QString &t) {
            got.append({s, t});
        },
        limits);
    c.add(QStringLiteral("stdout"), QStringLiteral("12345"));
    QVERIFY(got.isEmpty());
    c.add(QStringLiteral("stdout"), QStringLiteral("67890"));
    QCOMPARE(got, (QList<Chunk>{{QStringLiteral("stdout"), QStringLiteral("1234567890")}}));
}

void TestSandboxOutputCoalescer::quietPiecesArriveAfterTheInterval() {
    QList<Chunk> got;
    SandboxOutputCoalescer::Limits limits;
    limits.intervalMs = 20;
    SandboxOutputCoalescer c(
        [&](const QString &s, const QString &t) {
            got.append({s, t});
        },
        limits);
    c.add(QStringLiteral("stdout"), QStringLiteral("tick\n"));
    QTRY_COMPARE_WITH_TIMEOUT(got.size(), 1, 10000);
    QCOMPARE(got.first().second, QStringLiteral("tick\n"));
}

void TestSandboxOutputCoalescer::capCutsOnACharacterAndSaysSo_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("cap");
    QTest::addColumn<QString>("kept");
    QTest::newRow("ascii") << QStringLiteral("abcdef") << qint64(4) << QStringLiteral("abcd");
    // "é" is 2 bytes: a cap inside it keeps the character out rather than half of it.
    QTest::newRow("inside a character") << QStringLiteral("aé") << qint64(2) << QStringLiteral("a");
    QTest::newRow("exactly at the cap")
        << QStringLiteral("aé") << qint64(3) << QStringLiteral("aé");
}

void TestSandboxOutputCoalescer::capCutsOnACharacterAndSaysSo() {
    QFETCH(QString, text);
    QFETCH(qint64, cap);
    QFETCH(QString, kept);
    QString got;
    int calls = 0;
    SandboxOutputCoalescer::Limits limits;
    limits.capBytes = cap;
    SandboxOutputCoalescer c(
        [&](const QString &, const QString &t) {
            got += t;
            ++calls;
        },
        limits);
    c.add(QStringLiteral("stdout"), text);
    c.add(QStringLiteral("stdout"), QStringLiteral("more"));
    c.finish();
    // A text exactly at the cap is kept whole; the next piece is past it and brings the notice.
    QCOMPARE(got, kept + SandboxOutputCoalescer::capNotice(cap));
    QVERIFY(c.isCapped());
    QVERIFY(calls <= 2);
}

void TestSandboxOutputCoalescer::nothingAfterFinishOrWithoutASink() {
    int calls = 0;
    SandboxOutputCoalescer c([&](const QString &, const QString &) { ++calls; });
    c.add(QStringLiteral("stdout"), QStringLiteral("x"));
    c.finish();
    QCOMPARE(calls, 1);
    c.add(QStringLiteral("stdout"), QStringLiteral("late"));
    c.flush();
    QCOMPARE(calls, 1);
    QVERIFY(!c.hasPending()); // nor later: nothing is kept, no timer runs
    SandboxOutputCoalescer none(SandboxOutputSink{});
    none.add(QStringLiteral("stdout"), QStringLiteral("x"));
    none.finish(); // no sink: nothing to call, nothing to crash
    SandboxOutputCoalescer::Limits off;
    off.capBytes = 0; // live output turned off
    SandboxOutputCoalescer disabled([&](const QString &, const QString &) { ++calls; }, off);
    disabled.add(QStringLiteral("stdout"), QStringLiteral("x"));
    disabled.finish();
    QCOMPARE(calls, 1);
}

QTEST_GUILESS_MAIN(TestSandboxOutputCoalescer)
#include "tst_sandboxoutputcoalescer.moc"
