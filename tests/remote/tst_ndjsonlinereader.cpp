#include "sandbox/remote/ndjsonlinereader.h"

#include <QtTest>

using loopscope::NdjsonLineReader;

class TestNdjsonLineReader : public QObject {
    Q_OBJECT
private slots:
    void splitsAcrossReads_data();
    void splitsAcrossReads();
    void capBoundary_data();
    void capBoundary();
    void endlessLineStopsAtCap();
    void crlfSplitAtTheCapIsNotCountedTwice();
    void capMessageIsLiteLLMs();
};

void TestNdjsonLineReader::splitsAcrossReads_data() {
    QTest::addColumn<int>("every");
    QTest::newRow("byte by byte") << 1;
    QTest::newRow("3 bytes (splits UTF-8)") << 3;
    QTest::newRow("7 bytes") << 7;
    QTest::newRow("one read") << 0;
}

void TestNdjsonLineReader::splitsAcrossReads() {
    QFETCH(int, every);
    const QByteArray input = QStringLiteral("héllo 😀\r\n\nwörld 世界\nlast no newline").toUtf8();
    NdjsonLineReader reader;
    QList<QByteArray> lines;
    if (every == 0) {
        lines += reader.feed(input);
    } else {
        for (qsizetype i = 0; i < input.size(); i += every)
            lines += reader.feed(input.mid(i, every));
    }
    lines += reader.finish();
    const QList<QByteArray> expected{QStringLiteral("héllo 😀").toUtf8(), QByteArray(),
                                     QStringLiteral("wörld 世界").toUtf8(),
                                     QByteArrayLiteral("last no newline")};
    QCOMPARE(lines, expected);
    QVERIFY(!reader.capExceeded());
    qint64 total = 0;
    for (const QByteArray &l : expected)
        total += l.size();
    QCOMPARE(reader.totalLineBytes(), total);
}

void TestNdjsonLineReader::capBoundary_data() {
    QTest::addColumn<int>("cap");
    QTest::addColumn<bool>("exceeded");
    // Two lines of 4 bytes each ("abcd\nefgh\n"): 8 counted bytes, newlines excluded.
    QTest::newRow("cap equals total") << 8 << false;
    QTest::newRow("cap one below total") << 7 << true;
    QTest::newRow("cap above") << 100 << false;
}

void TestNdjsonLineReader::capBoundary() {
    QFETCH(int, cap);
    QFETCH(bool, exceeded);
    NdjsonLineReader reader(cap);
    const QList<QByteArray> lines = reader.feed("abcd\nefgh\n") + reader.finish();
    QCOMPARE(reader.capExceeded(), exceeded);
    if (!exceeded)
        QCOMPARE(lines, (QList<QByteArray>{"abcd", "efgh"}));
}

// Found by the split-invariance check of tests/fuzz/ndjson (corpus crash-cap-exact-crlf): a
// line of exactly the cap was refused when the read ended between its '\r' and '\n', and
// accepted otherwise.
void TestNdjsonLineReader::crlfSplitAtTheCapIsNotCountedTwice() {
    NdjsonLineReader whole(3);
    QCOMPARE(whole.feed("abc\r\n"), QList<QByteArray>{"abc"});
    NdjsonLineReader split(3);
    QVERIFY(split.feed("abc\r").isEmpty());
    QVERIFY(!split.capExceeded());
    QCOMPARE(split.feed("\n"), QList<QByteArray>{"abc"});
    QVERIFY(!split.capExceeded());
    QCOMPARE(split.totalLineBytes(), 3);
    // One more byte than the cap is still refused at once, '\r' or not.
    NdjsonLineReader over(3);
    QVERIFY(over.feed("abcd\r").isEmpty());
    QVERIFY(over.capExceeded());
}

void TestNdjsonLineReader::endlessLineStopsAtCap() {
    NdjsonLineReader reader(1000);
    const QByteArray chunk(300, 'x');
    int fed = 0;
    while (!reader.capExceeded() && fed < 100) {
        QVERIFY(reader.feed(chunk).isEmpty());
        ++fed;
    }
    QVERIFY(reader.capExceeded());
    QCOMPARE(fed, 4); // 1200 buffered bytes > 1000: stopped without waiting for a newline
    QVERIFY(reader.feed("\n").isEmpty());
    QVERIFY(reader.finish().isEmpty());
}

void TestNdjsonLineReader::capMessageIsLiteLLMs() {
    NdjsonLineReader reader;
    QCOMPARE(reader.capExceededMessage(),
             QStringLiteral("Sandbox output exceeded 10485760 bytes; aborting to avoid unbounded "
                            "memory use."));
}

QTEST_GUILESS_MAIN(TestNdjsonLineReader)
#include "tst_ndjsonlinereader.moc"
