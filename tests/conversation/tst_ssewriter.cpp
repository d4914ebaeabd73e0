#include "conversation/ssewriter.h"

#include <QtTest>

using namespace loopscope;

class TestSseWriter : public QObject {
    Q_OBJECT

private slots:
    void frames_data() {
        QTest::addColumn<QByteArray>("event");
        QTest::addColumn<QByteArray>("data");
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("named") << QByteArray("response.created") << QByteArray("{}")
                               << QByteArray("event: response.created\ndata: {}\n\n");
        QTest::newRow("unnamed, as Chat Completions streams")
            << QByteArray() << QByteArray("{\"a\":1}") << QByteArray("data: {\"a\":1}\n\n");
        QTest::newRow("the default name is left out")
            << QByteArray("message") << QByteArray("x") << QByteArray("data: x\n\n");
        QTest::newRow("a line break cannot end the field")
            << QByteArray("e") << QByteArray("one\ntwo\r\nthree")
            << QByteArray("event: e\ndata: one\ndata: two\ndata: three\n\n");
        QTest::newRow("empty data is still an event")
            << QByteArray("ping") << QByteArray() << QByteArray("event: ping\ndata: \n\n");
    }
    void frames() {
        QFETCH(QByteArray, event);
        QFETCH(QByteArray, data);
        QFETCH(QByteArray, bytes);
        QCOMPARE(SseWriter::frame(event, data), bytes);
    }

    void jsonIsCompact() {
        QCOMPARE(SseWriter::frame("message_stop", QJsonObject{{QStringLiteral("type"),
                                                               QStringLiteral("message_stop")}}),
                 QByteArray("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
        QCOMPARE(SseWriter::done(), QByteArray("data: [DONE]\n\n"));
    }
};

QTEST_APPLESS_MAIN(TestSseWriter)
#include "tst_ssewriter.moc"
