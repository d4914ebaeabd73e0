// ResponsesBridge::notServed: which answers to /responses mean "this server has no Responses
// API" (bridge over chat, remember the route) and which come from one that exists (relay them:
// a stale previous_response_id on OpenAI must never turn its route into a bridged one).
#include "upstream/responsesbridge.h"

#include <QtTest>

using namespace loopscope;

class TstResponsesBridge : public QObject {
    Q_OBJECT
private slots:
    void notServed_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<bool>("notServed");
        // clang-format off
        QTest::newRow("vLLM / FastAPI")
            << 404 << QByteArray(R"J({"detail":"Not Found"})J") << true;
        QTest::newRow("llama.cpp")
            << 404 << QByteArray(R"J({"error":{"code":404,"message":"File Not Found","type":"not_found_error"}})J") << true;
        QTest::newRow("LM Studio")
            << 404 << QByteArray(R"J({"error":"Unexpected endpoint or method. (POST /v1/responses)"})J") << true;
        QTest::newRow("a Go server's text")
            << 404 << QByteArray(R"J(404 page not found)J") << true;
        QTest::newRow("OpenAI's unknown URL")
            << 404 << QByteArray(R"J({"error":{"message":"Invalid URL (POST /v1/responses)","type":"invalid_request_error","param":null,"code":null}})J") << true;
        QTest::newRow("method not allowed")
            << 405 << QByteArray(R"J()J") << true;
        QTest::newRow("not implemented")
            << 501 << QByteArray(R"J(Not Implemented)J") << true;
        QTest::newRow("OpenAI's model_not_found")
            << 404 << QByteArray(R"J({"error":{"message":"The model `x` does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}})J") << false;
        QTest::newRow("Ollama's unknown model")
            << 404 << QByteArray(R"J({"error":{"message":"model x not found, try pulling it first","type":"api_error"}})J") << false;
        QTest::newRow("a stale previous_response_id")
            << 404 << QByteArray(R"J({"error":{"message":"Previous response with id resp_1 not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}})J") << false;
        QTest::newRow("an unknown conversation")
            << 404 << QByteArray(R"J({"error":{"message":"Conversation not found","type":"invalid_request_error"}})J") << false;
        QTest::newRow("any parameter's error")
            << 404 << QByteArray(R"J({"error":{"message":"not found","type":"invalid_request_error","param":"input[0].id"}})J") << false;
        QTest::newRow("a served answer")
            << 200 << QByteArray(R"J({})J") << false;
        QTest::newRow("a server error")
            << 500 << QByteArray(R"J(Internal)J") << false;
        // clang-format on
    }
    void notServed() {
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        QFETCH(bool, notServed);
        QCOMPARE(ResponsesBridge::notServed(status, body), notServed);
    }
    void previousNotFoundIsOpenAisError() {
        const QJsonObject error =
            ResponsesBridge::previousNotFound(QStringLiteral("resp_x")).value(u"error").toObject();
        QCOMPARE(error.value(u"code").toString(), QStringLiteral("previous_response_not_found"));
        QCOMPARE(error.value(u"param").toString(), QStringLiteral("previous_response_id"));
        QCOMPARE(error.value(u"type").toString(), QStringLiteral("invalid_request_error"));
        QCOMPARE(error.value(u"message").toString(),
                 QStringLiteral("Previous response with id 'resp_x' not found."));
    }
};

QTEST_APPLESS_MAIN(TstResponsesBridge)
#include "tst_responsesbridge.moc"
