#include "sandbox/local/localsandboxframecodec.h"

#include <QJsonDocument>
#include <QTest>

using namespace loopscope;

class TestLocalSandboxFrameCodec : public QObject {
    Q_OBJECT
private slots:
    void roundTripInPieces_data();
    void roundTripInPieces();
    void severalFramesInOneRead();
    void oversizedFrameRejectedBeforeBuffering();
    void nonObjectFrameIsAnError();
    void rawFrameHasBigEndianLength();
    void rawFramesCarryBinary();
};

void TestLocalSandboxFrameCodec::roundTripInPieces_data() {
    QTest::addColumn<int>("chunk");
    QTest::newRow("byte by byte") << 1;
    QTest::newRow("3 bytes") << 3;
    QTest::newRow("whole") << (1 << 20);
}

void TestLocalSandboxFrameCodec::roundTripInPieces() {
    QFETCH(int, chunk);
    const QJsonObject message{{QStringLiteral("op"), QStringLiteral("result")},
                              {QStringLiteral("stdout"), QStringLiteral("h\u00e9llo\n")}};
    const QByteArray wire = LocalSandboxFrameCodec::encode(message);
    LocalSandboxFrameCodec codec(1024);
    std::optional<QByteArray> payload;
    for (qsizetype i = 0; i < wire.size(); i += chunk) {
        QVERIFY(!payload);
        QVERIFY(codec.feed(wire.mid(i, chunk)));
        payload = codec.next();
    }
    QVERIFY(payload);
    const std::optional<QJsonObject> decoded = codec.parseObject(*payload);
    QVERIFY(decoded);
    QCOMPARE(*decoded, message);
    QCOMPARE(codec.bufferedBytes(), 0);
    QVERIFY(!codec.next());
}

void TestLocalSandboxFrameCodec::severalFramesInOneRead() {
    QByteArray wire;
    for (int i = 0; i < 5; ++i)
        wire += LocalSandboxFrameCodec::encode({{QStringLiteral("id"), i}});
    wire += LocalSandboxFrameCodec::encode({{QStringLiteral("id"), 5}}).left(6);
    LocalSandboxFrameCodec codec(1024);
    QVERIFY(codec.feed(wire));
    for (int i = 0; i < 5; ++i) {
        const auto payload = codec.next();
        QVERIFY(payload);
        const auto frame = codec.parseObject(*payload);
        QVERIFY(frame);
        QCOMPARE(frame->value(QStringLiteral("id")).toInt(), i);
    }
    QVERIFY(!codec.next());
    QVERIFY(!codec.failed());
}

void TestLocalSandboxFrameCodec::oversizedFrameRejectedBeforeBuffering() {
    LocalSandboxFrameCodec codec(100);
    QByteArray header(4, '\0');
    header[1] = 1; // 65536 bytes announced
    QVERIFY(!codec.feed(header + QByteArray(50, 'x')));
    QVERIFY(codec.failed());
    QVERIFY(codec.error().contains(QStringLiteral("65536")));
    QCOMPARE(codec.bufferedBytes(), 0);
    QVERIFY(!codec.feed(QByteArray(10, 'x')));
    QCOMPARE(codec.bufferedBytes(), 0);
}

void TestLocalSandboxFrameCodec::nonObjectFrameIsAnError() {
    LocalSandboxFrameCodec codec(100);
    QVERIFY(codec.feed(LocalSandboxFrameCodec::encodeRaw("[1,2]")));
    const auto payload = codec.next();
    QVERIFY(payload);
    QCOMPARE(*payload, QByteArray("[1,2]"));
    QVERIFY(!codec.parseObject(*payload));
    QVERIFY(codec.failed());
}

void TestLocalSandboxFrameCodec::rawFrameHasBigEndianLength() {
    const QByteArray frame = LocalSandboxFrameCodec::encodeRaw(QByteArray(258, 'a'));
    QCOMPARE(frame.size(), 262);
    QCOMPARE(frame.left(4), QByteArray::fromHex("00000102"));
}

void TestLocalSandboxFrameCodec::rawFramesCarryBinary() {
    const QByteArray binary("\x00\xff\xfe\n{", 5);
    LocalSandboxFrameCodec codec(16);
    QVERIFY(codec.feed(LocalSandboxFrameCodec::encodeRaw(binary) +
                       LocalSandboxFrameCodec::encodeRaw({})));
    QCOMPARE(codec.next().value_or(QByteArray("missing")), binary);
    QCOMPARE(codec.next().value_or(QByteArray("missing")), QByteArray());
    QVERIFY(!codec.next());
}

QTEST_GUILESS_MAIN(TestLocalSandboxFrameCodec)
#include "tst_localsandboxframecodec.moc"
