// OtlpSpanBuilder, OtlpSettings and the two encoders, on flows shaped as core/record records
// them (control-api.md): span names, kinds, parent links, ids per run, GenAI attributes,
// contents only when asked, and protobuf bytes that parse back with the OTLP field numbers.
#include "telemetry/otlpjsonencoder.h"
#include "telemetry/otlpprotoencoder.h"
#include "telemetry/otlpsettings.h"
#include "telemetry/otlpspanbuilder.h"

#include "otlp_trace.pb.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace loopscope;

namespace {

QJsonObject codeFlow(const QString &id, const QString &runId, const QJsonValue &codeError) {
    const double t0 = 1700000000000.0;
    QJsonArray hops{QJsonObject{{"kind", "client_request"},
                                {"at", t0},
                                {"method", "POST"},
                                {"path", "/v1/responses"},
                                {"headers", QJsonObject{{"authorization", "Bearer ****0001"}}},
                                {"body", QJsonObject{{"model", "gpt-5"},
                                                     {"instructions", "Be brief."},
                                                     {"input", "Compute the secret-ish 6*7"}}}},
                    QJsonObject{{"kind", "upstream_request"},
                                {"at", t0 + 1},
                                {"iteration", 0},
                                {"url", "https://api.example.com/v1/responses"},
                                {"body", QJsonObject{{"model", "gpt-5"}, {"input", "Compute"}}}},
                    QJsonObject{{"kind", "upstream_response"},
                                {"at", t0 + 101},
                                {"iteration", 0},
                                {"status", 200},
                                {"latency_ms", 100.0},
                                {"body", QJsonObject{{"id", "resp_1"},
                                                     {"model", "gpt-5-2025"},
                                                     {"status", "completed"},
                                                     {"output", QJsonArray{}}}},
                                {"usage", QJsonObject{{"input_tokens", 11}, {"output_tokens", 4}}}},
                    QJsonObject{{"kind", "code_run"},
                                {"at", t0 + 110},
                                {"iteration", 1},
                                {"call_id", "call_1"},
                                {"container_id", "cntr_1"},
                                {"code", "print(6*7)"},
                                {"stdout", "42\n"},
                                {"error", codeError},
                                {"output", "42\n"},
                                {"duration_ms", 30.0},
                                {"timed_out", false}},
                    QJsonObject{{"kind", "upstream_request"},
                                {"at", t0 + 150},
                                {"iteration", 1},
                                {"url", "https://api.example.com/v1/responses"},
                                {"body", QJsonObject{{"model", "gpt-5"}}}},
                    QJsonObject{{"kind", "upstream_response"},
                                {"at", t0 + 250},
                                {"iteration", 1},
                                {"status", 200},
                                {"latency_ms", 100.0},
                                {"body", QJsonObject{{"id", "resp_2"}, {"model", "gpt-5-2025"}}},
                                {"usage", QJsonObject{{"input_tokens", 20}, {"output_tokens", 6}}}},
                    QJsonObject{{"kind", "client_response"},
                                {"at", t0 + 260},
                                {"status", 200},
                                {"body", QJsonObject{{"id", "resp_2"}, {"model", "gpt-5-2025"}}}}};
    return {{"id", id},
            {"api", "responses"},
            {"method", "POST"},
            {"path", "/v1/responses"},
            {"model", "gpt-5"},
            {"state", "completed"},
            {"status", 200},
            {"started_at", t0},
            {"duration_ms", 260.0},
            {"run_id", runId},
            {"usage", QJsonObject{{"input_tokens", 31}, {"output_tokens", 10}}},
            {"hops", hops}};
}

const OtlpSpan *find(const QList<OtlpSpan> &spans, OtlpSpan::Kind kind, int nth = 0) {
    for (const OtlpSpan &s : spans)
        if (s.kind == kind && nth-- == 0)
            return &s;
    return nullptr;
}

} // namespace

class TestOtlpSpanBuilder : public QObject {
    Q_OBJECT
private slots:
    void spansOfACodeInterpreterFlow() {
        const QList<OtlpSpan> spans =
            OtlpSpanBuilder::build(codeFlow("req_a", "run_x", QJsonValue::Null), false);
        QCOMPARE(spans.size(), 4);
        const OtlpSpan *root = find(spans, OtlpSpan::Server);
        QVERIFY(root);
        QCOMPARE(root->name, QStringLiteral("chat gpt-5"));
        QVERIFY(root->parentSpanId.isEmpty());
        QCOMPARE(root->traceId, OtlpSpanBuilder::traceIdFor("run_x"));
        QCOMPARE(root->traceId.size(), 16);
        QCOMPARE(root->spanId.size(), 8);
        QCOMPARE(root->startTimeUnixNano, qint64(1700000000000) * 1000000);
        QCOMPARE(root->endTimeUnixNano - root->startTimeUnixNano, qint64(260) * 1000000);
        QCOMPARE(root->attribute("gen_ai.usage.input_tokens").toLongLong(), 31);
        QCOMPARE(root->attribute("gen_ai.response.id").toString(), QStringLiteral("resp_2"));
        QCOMPARE(root->attribute("loopscope.flow.id").toString(), QStringLiteral("req_a"));

        const OtlpSpan *call1 = find(spans, OtlpSpan::Client, 0);
        const OtlpSpan *call2 = find(spans, OtlpSpan::Client, 1);
        QVERIFY(call1 && call2);
        QCOMPARE(call1->parentSpanId, root->spanId);
        QCOMPARE(call1->traceId, root->traceId);
        QCOMPARE(call1->name, QStringLiteral("chat gpt-5"));
        QCOMPARE(call1->attribute("gen_ai.provider.name").toString(), QStringLiteral("openai"));
        QCOMPARE(call1->attribute("gen_ai.response.model").toString(),
                 QStringLiteral("gpt-5-2025"));
        QCOMPARE(call1->attribute("gen_ai.response.id").toString(), QStringLiteral("resp_1"));
        QCOMPARE(call1->attribute("gen_ai.usage.input_tokens").toLongLong(), 11);
        QCOMPARE(call1->attribute("gen_ai.usage.output_tokens").toLongLong(), 4);
        QCOMPARE(call1->attribute("openai.api.type").toString(), QStringLiteral("responses"));
        QCOMPARE(call1->attribute("server.address").toString(), QStringLiteral("api.example.com"));
        QCOMPARE(call1->attribute("server.port").toLongLong(), 443);
        QCOMPARE(call1->endTimeUnixNano - call1->startTimeUnixNano, qint64(100) * 1000000);
        QCOMPARE(call2->attribute("gen_ai.response.id").toString(), QStringLiteral("resp_2"));
        QVERIFY(call1->spanId != call2->spanId);

        const OtlpSpan *run = find(spans, OtlpSpan::Internal);
        QVERIFY(run);
        QCOMPARE(run->name, QStringLiteral("execute_tool code_interpreter"));
        QCOMPARE(run->parentSpanId, root->spanId);
        QCOMPARE(run->attribute("gen_ai.tool.call.id").toString(), QStringLiteral("call_1"));
        QCOMPARE(run->attribute("gen_ai.tool.name").toString(), QStringLiteral("code_interpreter"));
        QCOMPARE(run->status, OtlpSpan::Unset);
        QCOMPARE(run->endTimeUnixNano - run->startTimeUnixNano, qint64(30) * 1000000);
        // No contents without capture: neither code, output nor messages.
        for (const OtlpSpan &s : spans)
            for (const OtlpAttribute &a : s.attributes)
                QVERIFY2(!a.value.toString().contains("6*7"), qPrintable(a.key));
    }

    void codeErrorsAreErrorSpans_data() {
        QTest::addColumn<QJsonValue>("error");
        QTest::newRow("string") << QJsonValue("ZeroDivisionError: division by zero");
        QTest::newRow("object") << QJsonValue(
            QJsonObject{{"name", "ZeroDivisionError"}, {"value", "division by zero"}});
    }
    void codeErrorsAreErrorSpans() {
        QFETCH(QJsonValue, error);
        const auto plain = OtlpSpanBuilder::build(codeFlow("req_e", "", error), false);
        const OtlpSpan *run = find(plain, OtlpSpan::Internal);
        QCOMPARE(run->status, OtlpSpan::Error);
        QCOMPARE(run->attribute("error.type").toString(), QStringLiteral("code_error"));
        QVERIFY(!run->statusMessage.contains("ZeroDivision")); // output text is content
        // No run: the trace is the flow's own.
        QCOMPARE(run->traceId, OtlpSpanBuilder::traceIdFor("req_e"));
        const auto captured = OtlpSpanBuilder::build(codeFlow("req_e", "", error), true);
        QVERIFY(find(captured, OtlpSpan::Internal)->statusMessage.contains("ZeroDivision"));
    }

    void contentOnlyWhenCaptured() {
        const auto spans = OtlpSpanBuilder::build(codeFlow("req_c", "run_c", {}), true);
        const OtlpSpan *run = find(spans, OtlpSpan::Internal);
        QVERIFY(run->attribute("gen_ai.tool.call.arguments").toString().contains("print(6*7)"));
        QCOMPARE(run->attribute("gen_ai.tool.call.result").toString(), QStringLiteral("42\n"));
        const OtlpSpan *root = find(spans, OtlpSpan::Server);
        QCOMPARE(root->attribute("gen_ai.system_instructions").toString(),
                 QStringLiteral("Be brief."));
        QVERIFY(root->attribute("gen_ai.input.messages").toString().contains("6*7"));
        // Headers are never exported, masked or not.
        for (const OtlpSpan &s : spans)
            for (const OtlpAttribute &a : s.attributes)
                QVERIFY2(!a.value.toString().contains("0001"), qPrintable(a.key));
    }

    void flowsOfOneRunShareATrace() {
        const auto a = OtlpSpanBuilder::build(codeFlow("req_1", "run_same", {}), false);
        const auto b = OtlpSpanBuilder::build(codeFlow("req_2", "run_same", {}), false);
        const auto c = OtlpSpanBuilder::build(codeFlow("req_3", "run_other", {}), false);
        QCOMPARE(a.first().traceId, b.first().traceId);
        QVERIFY(a.first().traceId != c.first().traceId);
        QVERIFY(a.first().spanId != b.first().spanId);
        // A re-export of the same flow has the same ids (collectors deduplicate).
        QCOMPARE(OtlpSpanBuilder::build(codeFlow("req_1", "run_same", {}), false).first().spanId,
                 a.first().spanId);
    }

    void operationPerApi_data() {
        QTest::addColumn<QString>("api");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("rootName");
        QTest::newRow("responses") << "responses"
                                   << "/v1/responses"
                                   << "chat gpt-5";
        QTest::newRow("chat") << "chat_completions"
                              << "/v1/chat/completions"
                              << "chat gpt-5";
        QTest::newRow("messages") << "messages"
                                  << "/v1/messages"
                                  << "chat gpt-5";
        QTest::newRow("completions") << "other"
                                     << "/v1/completions"
                                     << "text_completion gpt-5";
        QTest::newRow("models") << "models"
                                << "/v1/models"
                                << "";
        QTest::newRow("containers") << "containers"
                                    << "/v1/containers"
                                    << "";
    }
    void operationPerApi() {
        QFETCH(QString, api);
        QFETCH(QString, path);
        QFETCH(QString, rootName);
        QJsonObject flow = codeFlow("req_p", "", {});
        flow.insert("api", api);
        flow.insert("path", path);
        const auto spans = OtlpSpanBuilder::build(flow, false);
        if (rootName.isEmpty()) {
            QVERIFY(spans.isEmpty());
            return;
        }
        QCOMPARE(spans.first().name, rootName);
    }

    void messagesFlowsAreAnthropicAndNameTheirSubTool() {
        // A Messages code-execution loop: the model's tool_use names the sub-tool its code run
        // answered; the provider is Anthropic and OpenAI's own attribute is left out.
        QJsonObject flow = codeFlow("req_m", "", QJsonValue::Null);
        flow.insert("api", "messages");
        flow.insert("path", "/v1/messages");
        QJsonArray hops = flow.value("hops").toArray();
        QJsonObject first = hops.at(2).toObject();
        first.insert("body",
                     QJsonObject{{"id", "msg_1"},
                                 {"type", "message"},
                                 {"role", "assistant"},
                                 {"model", "claude-x"},
                                 {"stop_reason", "tool_use"},
                                 {"content", QJsonArray{QJsonObject{
                                                 {"type", "tool_use"},
                                                 {"id", "call_1"},
                                                 {"name", "bash_code_execution"},
                                                 {"input", QJsonObject{{"command", "ls"}}}}}}});
        hops.replace(2, first);
        flow.insert("hops", hops);
        const auto spans = OtlpSpanBuilder::build(flow, false);
        QCOMPARE(spans.size(), 4);
        const OtlpSpan *root = find(spans, OtlpSpan::Server);
        QVERIFY(root);
        QCOMPARE(root->attribute("gen_ai.provider.name").toString(), QStringLiteral("anthropic"));
        QVERIFY(!root->attribute("openai.api.type").isValid());
        const OtlpSpan *call = find(spans, OtlpSpan::Client);
        QCOMPARE(call->attribute("gen_ai.response.finish_reasons").toStringList(),
                 QStringList{QStringLiteral("tool_use")});
        const OtlpSpan *run = find(spans, OtlpSpan::Internal);
        QVERIFY(run);
        QCOMPARE(run->name, QStringLiteral("execute_tool bash_code_execution"));
        QCOMPARE(run->attribute("gen_ai.tool.name").toString(),
                 QStringLiteral("bash_code_execution"));
    }

    void sandboxEventsLandOnTheirCodeRun() {
        const qint64 t = qint64(1700000000105) * 1000000;
        const QList<OtlpEvent> events{
            {t, "loopscope.sandbox.created", {{"loopscope.container.id", "cntr_1"}}},
            {t, "loopscope.sandbox.reused", {{"loopscope.container.id", "cntr_other"}}}};
        const auto spans = OtlpSpanBuilder::build(codeFlow("req_s", "", {}), false, events);
        const OtlpSpan *run = find(spans, OtlpSpan::Internal);
        QCOMPARE(run->events.size(), 1);
        QCOMPARE(run->events.first().name, QStringLiteral("loopscope.sandbox.created"));
        QCOMPARE(find(spans, OtlpSpan::Server)->events.size(), 1);
    }

    void jsonEncoding() {
        const auto spans = OtlpSpanBuilder::build(codeFlow("req_j", "run_j", {}), false);
        const QJsonObject req = OtlpJsonEncoder::request(spans, {});
        const QJsonObject scope = req["resourceSpans"][0]["scopeSpans"][0].toObject();
        const QJsonArray js = scope["spans"].toArray();
        QCOMPARE(js.size(), spans.size());
        const QJsonObject root = js[0].toObject();
        QCOMPARE(root["traceId"].toString(), QString::fromLatin1(spans[0].traceId.toHex()));
        QCOMPARE(root["kind"].toInt(), 2);
        QVERIFY(root["startTimeUnixNano"].isString());
        QVERIFY(!root.contains("parentSpanId"));
        QCOMPARE(js[1]["parentSpanId"].toString(), root["spanId"].toString());
        bool sawInt = false;
        for (const QJsonValue &a : root["attributes"].toArray())
            if (a["key"].toString() == "gen_ai.usage.input_tokens") {
                QCOMPARE(a["value"]["intValue"].toString(), QStringLiteral("31"));
                sawInt = true;
            }
        QVERIFY(sawInt);
    }

    void protobufEncodingParsesBack() {
        const auto spans = OtlpSpanBuilder::build(codeFlow("req_pb", "run_pb", {}), false);
        const QByteArray bytes = OtlpProtoEncoder::encode(spans, {"loopscope", "9.9"});
        otlp::ExportTraceServiceRequest request;
        QVERIFY(request.ParseFromArray(bytes.constData(), int(bytes.size())));
        QCOMPARE(request.resource_spans_size(), 1);
        const auto &ss = request.resource_spans(0).scope_spans(0);
        QCOMPARE(ss.spans_size(), spans.size());
        const otlp::Span &root = ss.spans(0);
        QCOMPARE(QByteArray::fromStdString(root.trace_id()), spans[0].traceId);
        QCOMPARE(int(root.kind()), 2);
        QCOMPARE(qint64(root.start_time_unix_nano()), spans[0].startTimeUnixNano);
        QCOMPARE(QByteArray::fromStdString(ss.spans(1).parent_span_id()), spans[0].spanId);
        // Field 1 of the first Span on the wire is trace_id (tag 0x0a, 16 bytes).
        QVERIFY(bytes.contains(QByteArray(QByteArray("\x0a\x10", 2) + spans[0].traceId)));
    }

    void settings() {
        OtlpSettings s;
        s.endpoint = "http://collector:4318/";
        QCOMPARE(s.url(), QStringLiteral("http://collector:4318/v1/traces"));
        s.endpoint = "http://collector:4318/v1/traces";
        QCOMPARE(s.url(), QStringLiteral("http://collector:4318/v1/traces"));

        QProcessEnvironment env;
        env.insert("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://x.example/api/traces");
        env.insert("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic%20abc,x-b=2");
        env.insert("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
        OtlpSettings e;
        QString error;
        QVERIFY(e.applyEnvironment(env, &error));
        QCOMPARE(e.url(), QStringLiteral("https://x.example/api/traces"));
        QCOMPARE(e.headers.size(), 2);
        QCOMPARE(e.headers[0].second, QByteArray("Basic abc"));
        QCOMPARE(e.protocol, OtlpSettings::Protocol::Protobuf);

        // The config wins over the environment; secrets may come from it.
        QProcessEnvironment secrets;
        secrets.insert("LF_AUTH", "Basic xyz");
        QVERIFY(e.applyConfig(
            QJsonObject{{"endpoint", "http://127.0.0.1:4318"},
                        {"protocol", "http/json"},
                        {"capture_content", true},
                        {"headers", QJsonObject{{"Authorization", "os.environ/LF_AUTH"}}}},
            secrets, &error));
        QCOMPARE(e.url(), QStringLiteral("http://127.0.0.1:4318/v1/traces"));
        QCOMPARE(e.protocol, OtlpSettings::Protocol::Json);
        QVERIFY(e.captureContent);
        QCOMPARE(e.headers.last().second, QByteArray("Basic xyz"));

        QVERIFY(!e.applyConfig(QJsonObject{{"protocol", "grpc"}}, {}, &error));
        QVERIFY(!e.applyConfig(QJsonObject{{"endpoint", "ftp://x"}}, {}, &error));
        QVERIFY(!e.applyConfig(QJsonObject{{"headers", QJsonObject{{"A", "os.environ/NOPE"}}}}, {},
                               &error));
        QVERIFY(error.contains("NOPE"));
        QPair<QByteArray, QByteArray> h;
        QVERIFY(!OtlpSettings::parseHeader("novalue", &h));
        QVERIFY(!OtlpSettings::parseHeader("=v", &h));
        QVERIFY(OtlpSettings::parseHeader("k = v=w", &h));
        QCOMPARE(h.second, QByteArray("v=w"));
    }
};

QTEST_GUILESS_MAIN(TestOtlpSpanBuilder)
#include "tst_otlpspanbuilder.moc"
