// StoredBlob: the history's compressed hops, written as Zstandard frames and read in either
// form (the qCompress blobs of files written before, told apart by the frame's magic number).
#include "record/storedblob.h"

#include <QRandomGenerator>
#include <QtTest>

using namespace loopscope;

class TstStoredBlob : public QObject {
    Q_OBJECT
private slots:
    void roundTrip_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::newRow("empty array") << QByteArray("[]");
        QTest::newRow("a hop") << QByteArray(R"([{"kind":"client_request","body":{"n":1}}])");
        QByteArray prose;
        for (int i = 0; prose.size() < 1024 * 1024; ++i)
            prose += "line " + QByteArray::number(i) + ": \\\"quoted\\\" caf\xc3\xa9\\n";
        QTest::newRow("1 MB of text") << prose;
        QByteArray noise(256 * 1024, Qt::Uninitialized); // what no compressor shrinks
        QRandomGenerator generator(7);
        generator.fillRange(reinterpret_cast<quint32 *>(noise.data()), noise.size() / 4);
        QTest::newRow("incompressible") << noise;
    }
    void roundTrip() {
        QFETCH(QByteArray, text);
        const QByteArray blob = StoredBlob::compress(text);
        QVERIFY(StoredBlob::isZstd(blob));
        QCOMPARE(StoredBlob::decompress(blob), text);
        // Into a buffer that held a larger text before (a run's read reuses one).
        QByteArray out(3 * 1024 * 1024, 'z');
        QVERIFY(StoredBlob::decompressInto(blob, out));
        QCOMPARE(out, text);
        // And what files written before hold.
        const QByteArray old = qCompress(text, 1);
        QVERIFY(!StoredBlob::isZstd(old));
        QCOMPARE(StoredBlob::decompress(old), text);
        QVERIFY(StoredBlob::decompressInto(old, out));
        QCOMPARE(out, text);
    }

    void damagedBlobsReadAsNothing_data() {
        QTest::addColumn<QByteArray>("blob");
        const QByteArray text(64 * 1024, 'a');
        QByteArray cut = StoredBlob::compress(text);
        cut.chop(cut.size() / 2);
        QTest::newRow("a frame cut short") << cut;
        QTest::newRow("no blob") << QByteArray();
        QTest::newRow("neither form") << QByteArray("plain text, not compressed");
        QTest::newRow("only the magic") << StoredBlob::compress("[]").left(4);
        QTest::newRow("a zlib stream cut short") << qCompress(text, 1).left(40);
    }
    void damagedBlobsReadAsNothing() {
        QFETCH(QByteArray, blob);
        QByteArray out("what a reused buffer held");
        QVERIFY(!StoredBlob::decompressInto(blob, out));
        QVERIFY(StoredBlob::decompress(blob).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TstStoredBlob)
#include "tst_storedblob.moc"
