// Issue 14: the Containers files API and the data-analysis loop inside one process: real
// loopback HTTP in front, a scripted upstream behind (model answers and OpenAI Files), real
// bubblewrap sandboxes in between.
#include "config/yamldocument.h"
#include "inspect/eventbus.h"
#include "interception/codeinterpreterinterception.h"
#include "proxy/containersapi.h"
#include "proxy/interceptionstack.h"
#include "proxy/multipartformdata.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "sandbox/containerfilestore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

const QByteArray kKeyA = "Bearer sk-files-test-user-a-0001";
const QByteArray kKeyB = "Bearer sk-files-test-user-b-0002";
const QByteArray kPngMagic("\x89PNG\r\n\x1a\n", 8);

QByteArray multipart(const QByteArray &boundary, const QByteArray &fileName,
                     const QByteArray &data) {
    return "--" + boundary +
           "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nuser_data\r\n--" +
           boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + fileName +
           "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + data + "\r\n--" + boundary +
           "--\r\n";
}

QJsonObject functionCall(const QString &code, const QString &callId) {
    const QJsonObject args{{QStringLiteral("code"), code}};
    return {{QStringLiteral("id"), QString(QStringLiteral("resp_") + callId)},
            {QStringLiteral("object"), QStringLiteral("response")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("model"), QStringLiteral("scripted")},
            {QStringLiteral("output"),
             QJsonArray{QJsonObject{
                 {QStringLiteral("type"), QStringLiteral("function_call")},
                 {QStringLiteral("id"), QString(QStringLiteral("fc_") + callId)},
                 {QStringLiteral("call_id"), callId},
                 {QStringLiteral("name"), QStringLiteral("litellm_code_execution")},
                 {QStringLiteral("arguments"),
                  QString::fromUtf8(QJsonDocument(args).toJson(QJsonDocument::Compact))},
                 {QStringLiteral("status"), QStringLiteral("completed")}}}}};
}

QJsonObject message(const QString &text) {
    return {{QStringLiteral("id"), QStringLiteral("resp_final")},
            {QStringLiteral("object"), QStringLiteral("response")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("model"), QStringLiteral("scripted")},
            {QStringLiteral("output"),
             QJsonArray{QJsonObject{
                 {QStringLiteral("type"), QStringLiteral("message")},
                 {QStringLiteral("id"), QStringLiteral("msg_final")},
                 {QStringLiteral("role"), QStringLiteral("assistant")},
                 {QStringLiteral("status"), QStringLiteral("completed")},
                 {QStringLiteral("content"),
                  QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("output_text")},
                                         {QStringLiteral("text"), text},
                                         {QStringLiteral("annotations"), QJsonArray()}}}}}}}};
}

} // namespace

class TestContainersApi : public QObject {
    Q_OBJECT

    std::unique_ptr<ScriptedUpstream> upstream;
    std::unique_ptr<EventBus> bus;
    std::unique_ptr<ProxyServer> server;
    std::unique_ptr<InterceptionStack> stack;

    RawHttpClient::Response call(const QByteArray &method, const QByteArray &path,
                                 const QByteArray &body = {}, const QByteArray &auth = kKeyA,
                                 const QByteArray &contentType = "application/json") {
        RawHttpClient client(server->port());
        client.request(method, path, body,
                       {{"authorization", auth}, {"content-type", contentType}});
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 60000))
            return {};
        return client.take();
    }
    RawHttpClient::Response callJson(const QByteArray &method, const QByteArray &path,
                                     const QJsonObject &body, const QByteArray &auth = kKeyA) {
        return call(method, path, QJsonDocument(body).toJson(QJsonDocument::Compact), auth);
    }
    QString createContainer(const QByteArray &auth = kKeyA) {
        const auto created = callJson("POST", "/v1/containers",
                                      {{QStringLiteral("name"), QStringLiteral("t")}}, auth);
        return created.json().value(QStringLiteral("id")).toString();
    }

private slots:
    void multipartIsParsed();
    void multipartPartsShareTheBody();
    void malformedMultipartIsRefused_data();
    void malformedMultipartIsRefused();
    void citationsAnnotateKnownFiles();

    void init();
    void cleanup();
    void uploadListReadDelete();
    void largeUploadArrivesWhole();
    void otherIdentitiesGet404();
    void badUploadsGetClearErrors();
    void fileIdsAreCopiedFromTheUpstream();
    void plotsBecomeImagesFilesAndCitations();
    void expiresAfterIsTheContainersIdleTime();
    void filesListPagesThroughEveryFile();
    void badPageQueriesAreRefused_data();
    void badPageQueriesAreRefused();
    void overlongFileNameIs400();
    void fileReplacedByAFifoIs404AtOnce();
    void containersKeepOneShotSlotsFree();
    void oneShotSandboxIsReleasedWhateverItsCodeDid_data();
    void oneShotSandboxIsReleasedWhateverItsCodeDid();

private:
    void restartWith(const QByteArray &sandboxYaml);
    void badExpiresAfterIsRefused_data();
    void badExpiresAfterIsRefused();
};

void TestContainersApi::multipartIsParsed() {
    QString error;
    const auto boundary = MultipartFormData::boundaryOf("multipart/form-data; boundary=\"a b\"");
    QCOMPARE(boundary.value_or(""), QByteArray("a b"));
    QVERIFY(!MultipartFormData::boundaryOf("application/json"));
    QVERIFY(!MultipartFormData::boundaryOf("multipart/form-data"));
    const QByteArray data("line1\r\n--not-the-boundary\r\n\x00\xff", 32);
    const auto parts = MultipartFormData::parse(multipart("XyZ", "d.bin", data), "XyZ", &error);
    QVERIFY2(parts, qPrintable(error));
    QCOMPARE(parts->size(), 2);
    QCOMPARE(parts->at(0).name, QStringLiteral("purpose"));
    QVERIFY(!parts->at(0).isFile);
    QCOMPARE(parts->at(0).data, QByteArray("user_data"));
    QCOMPARE(parts->at(1).fileName, QStringLiteral("d.bin"));
    QVERIFY(parts->at(1).isFile);
    QCOMPARE(parts->at(1).data, data);
}

// An upload's file part is most of its body: a copy held it twice in the proxy (issue 37; the
// memory itself is bench_upload's). The part points into the body, and writing to it leaves the
// body alone.
void TestContainersApi::multipartPartsShareTheBody() {
    const QByteArray data(3 * 1024 * 1024 + 7, 'd');
    const QByteArray body = multipart("XyZ", "big.bin", data);
    QString error;
    auto parts = MultipartFormData::parse(body, "XyZ", &error);
    QVERIFY2(parts, qPrintable(error));
    QCOMPARE(parts->size(), 2);
    MultipartPart file = parts->takeLast();
    QCOMPARE(file.data, data);
    const char *begin = body.constData();
    QVERIFY(file.data.constData() > begin);
    QVERIFY(file.data.constData() + file.data.size() < begin + body.size());
    QCOMPARE(file.data.constData(), begin + body.indexOf(data));
    file.data[0] = 'X';
    QCOMPARE(file.data.left(2), QByteArray("Xd"));
    QCOMPARE(body, multipart("XyZ", "big.bin", data));
}

void TestContainersApi::malformedMultipartIsRefused_data() {
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("reason");
    QTest::newRow("no boundary") << QByteArray("hello") << QStringLiteral("never occurs");
    QTest::newRow("no closing boundary")
        << QByteArray("--B\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\ndata")
        << QStringLiteral("closing boundary");
    QTest::newRow("no end of headers")
        << QByteArray("--B\r\nContent-Disposition: form-data; name=\"file\"")
        << QStringLiteral("end of headers");
    QTest::newRow("no name") << QByteArray("--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--")
                             << QStringLiteral("no Content-Disposition name");
    QTest::newRow("not form-data")
        << QByteArray("--B\r\nContent-Disposition: attachment; name=\"f\"\r\n\r\nx\r\n--B--")
        << QStringLiteral("not form-data");
    QTest::newRow("bad boundary line") << QByteArray("--Bxx\r\n") << QStringLiteral("CRLF");
}

void TestContainersApi::malformedMultipartIsRefused() {
    QFETCH(QByteArray, body);
    QFETCH(QString, reason);
    QString error;
    QVERIFY(!MultipartFormData::parse(body, "B", &error));
    QVERIFY2(error.startsWith(QStringLiteral("malformed multipart/form-data body")) &&
                 error.contains(reason),
             qPrintable(error));
}

void TestContainersApi::citationsAnnotateKnownFiles() {
    ContainerFileStore store;
    const ContainerFile plot =
        store.noteWritten(QStringLiteral("cntr_x"), {QStringLiteral("/mnt/data/my plot.png"), 5, 1},
                          QStringLiteral("assistant"));
    const QString text =
        QStringLiteral("See [chart](sandbox:/mnt/data/my%20plot.png). Also "
                       "sandbox:/mnt/data/unknown.csv and sandbox:/mnt/data/my%20plot.png.");
    const QJsonObject response = message(text);
    const QJsonObject annotated = CodeInterpreterInterception::annotateFileCitations(
        response, QStringLiteral("cntr_x"), store);
    const QJsonArray annotations = annotated[QStringLiteral("output")][0][QStringLiteral("content")]
                                            [0][QStringLiteral("annotations")]
                                                .toArray();
    QCOMPARE(annotations.size(), 2); // the unknown file is not cited
    for (const QJsonValue &a : annotations) {
        const QJsonObject o = a.toObject();
        QCOMPARE(o.keys(), (QStringList{QStringLiteral("container_id"), QStringLiteral("end_index"),
                                        QStringLiteral("file_id"), QStringLiteral("filename"),
                                        QStringLiteral("start_index"), QStringLiteral("type")}));
        QCOMPARE(o[QStringLiteral("type")].toString(), QStringLiteral("container_file_citation"));
        QCOMPARE(o[QStringLiteral("file_id")].toString(), plot.id);
        QCOMPARE(o[QStringLiteral("filename")].toString(), QStringLiteral("my plot.png"));
        const int start = o[QStringLiteral("start_index")].toInt();
        const int end = o[QStringLiteral("end_index")].toInt();
        QCOMPARE(text.mid(start, end - start), QStringLiteral("sandbox:/mnt/data/my%20plot.png"));
    }
    // Another container's files are never cited.
    QCOMPARE(CodeInterpreterInterception::annotateFileCitations(response, QStringLiteral("cntr_y"),
                                                                store),
             response);
}

void TestContainersApi::init() {
    upstream = std::make_unique<ScriptedUpstream>();
    QVERIFY(upstream->listen());
    bus = std::make_unique<EventBus>();
    ProxyConfig config;
    config.port = 0;
    config.maxBodyBytes = 40 * 1024 * 1024; // room for an upload above the 32 MiB file cap
    QString error;
    config.defaultRoute = ProxyConfig::routeForUpstream(upstream->baseUrl(), &error);
    QVERIFY2(config.defaultRoute, qPrintable(error));
    server = std::make_unique<ProxyServer>(config);
    stack = std::make_unique<InterceptionStack>(server.get(), bus.get());
    LocalSandboxOptions options;
    options.poolSize = 1;
    options.workDirBytes = 8 * LocalSandboxOptions::kMiB;
    QVERIFY2(stack->init(options, &error), qPrintable(error));
    QVERIFY(server->listen());
}

void TestContainersApi::cleanup() {
    if (stack) {
        auto done = stack->shutdown();
        QVERIFY(QTest::qWaitFor([&] { return done.isFinished(); }, 20000));
    }
    stack.reset();
    server.reset();
    upstream.reset();
    bus.reset();
}

void TestContainersApi::uploadListReadDelete() {
    const QString id = createContainer();
    QVERIFY(id.startsWith(QStringLiteral("cntr_")));
    const QByteArray base = "/v1/containers/" + id.toUtf8() + "/files";
    const QByteArray csv = "a,b\n1,2\n";
    const auto uploaded = call("POST", base, multipart("BND", "data.csv", csv), kKeyA,
                               "multipart/form-data; boundary=BND");
    QCOMPARE(uploaded.status, 200);
    const QJsonObject file = uploaded.json();
    QCOMPARE(file[QStringLiteral("object")].toString(), QStringLiteral("container.file"));
    QCOMPARE(file[QStringLiteral("path")].toString(), QStringLiteral("/mnt/data/data.csv"));
    QCOMPARE(file[QStringLiteral("source")].toString(), QStringLiteral("user"));
    QCOMPARE(file[QStringLiteral("bytes")].toInteger(), csv.size());
    QCOMPARE(file[QStringLiteral("container_id")].toString(), id);
    const QString fileId = file[QStringLiteral("id")].toString();
    QVERIFY(fileId.startsWith(QStringLiteral("cfile_")));

    const auto list = call("GET", base);
    QCOMPARE(list.status, 200);
    QCOMPARE(list.json()[QStringLiteral("data")].toArray().size(), 1);
    QCOMPARE(list.json()[QStringLiteral("data")][0][QStringLiteral("id")].toString(), fileId);
    QCOMPARE(call("GET", base + '/' + fileId.toUtf8()).json(), file);
    const auto content = call("GET", base + '/' + fileId.toUtf8() + "/content");
    QCOMPARE(content.status, 200);
    QCOMPARE(content.body, csv);
    const auto deleted = call("DELETE", base + '/' + fileId.toUtf8());
    QCOMPARE(deleted.status, 200);
    QCOMPARE(deleted.json()[QStringLiteral("deleted")].toBool(), true);
    QCOMPARE(call("GET", base + '/' + fileId.toUtf8()).status, 404);
    QCOMPARE(call("GET", base).json()[QStringLiteral("data")].toArray().size(), 0);
}

// Large enough to go to the sandbox in many chunks (LocalSandboxProcess::flushToDriver), and not
// a multiple of one: every byte arrives, in order.
void TestContainersApi::largeUploadArrivesWhole() {
    const QString id = createContainer();
    const QByteArray base = "/v1/containers/" + id.toUtf8() + "/files";
    QByteArray data(6 * 1024 * 1024 + 12345, Qt::Uninitialized); // the test /mnt/data has 8 MiB
    for (qsizetype i = 0; i < data.size(); ++i)
        data[i] = char((i * 131) ^ (i >> 9));
    const auto uploaded = call("POST", base, multipart("BND", "big.bin", data), kKeyA,
                               "multipart/form-data; boundary=BND");
    QCOMPARE(uploaded.status, 200);
    QCOMPARE(uploaded.json()[QStringLiteral("bytes")].toInteger(), data.size());
    const QByteArray fileId = uploaded.json()[QStringLiteral("id")].toString().toUtf8();
    const auto content = call("GET", base + '/' + fileId + "/content");
    QCOMPARE(content.status, 200);
    QVERIFY(content.body == data);
    // The interpreter took the frame whole and serves the next request.
    QCOMPARE(call("POST", base, multipart("BND", "small.txt", "s"), kKeyA,
                  "multipart/form-data; boundary=BND")
                 .status,
             200);
}

void TestContainersApi::otherIdentitiesGet404() {
    const QString id = createContainer();
    const QByteArray base = "/v1/containers/" + id.toUtf8() + "/files";
    const auto uploaded =
        call("POST", base, multipart("B", "x.txt", "x"), kKeyA, "multipart/form-data; boundary=B");
    const QByteArray fileId = uploaded.json()[QStringLiteral("id")].toString().toUtf8();
    QCOMPARE(call("GET", base, {}, kKeyB).status, 404);
    QCOMPARE(call("GET", base + '/' + fileId, {}, kKeyB).status, 404);
    QCOMPARE(call("GET", base + '/' + fileId + "/content", {}, kKeyB).status, 404);
    QCOMPARE(call("DELETE", base + '/' + fileId, {}, kKeyB).status, 404);
    QCOMPARE(
        call("POST", base, multipart("B", "y.txt", "y"), kKeyB, "multipart/form-data; boundary=B")
            .status,
        404);
    // Still there for its owner.
    QCOMPARE(call("GET", base + '/' + fileId + "/content").body, QByteArray("x"));
}

void TestContainersApi::badUploadsGetClearErrors() {
    const QString id = createContainer();
    const QByteArray base = "/v1/containers/" + id.toUtf8() + "/files";
    auto r = call("POST", base, "--B\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nx",
                  kKeyA, "multipart/form-data; boundary=B");
    QCOMPARE(r.status, 400);
    QVERIFY2(r.json()[QStringLiteral("error")][QStringLiteral("message")].toString().contains(
                 QStringLiteral("malformed multipart")),
             r.body.constData());
    r = call("POST", base, "x", kKeyA, "text/plain");
    QCOMPARE(r.status, 400);
    r = call("POST", base, multipart("B", "", "x").replace("; filename=\"\"", ""), kKeyA,
             "multipart/form-data; boundary=B");
    QCOMPARE(r.status, 400); // a 'file' field that is not a file
    // Larger than the sandbox's 8 MiB /mnt/data: a clear 413, and the proxy keeps serving.
    r = call("POST", base, multipart("B", "big.bin", QByteArray(9 * 1024 * 1024, 'x')), kKeyA,
             "multipart/form-data; boundary=B");
    QCOMPARE(r.status, 413);
    QVERIFY2(r.json()[QStringLiteral("error")][QStringLiteral("message")].toString().contains(
                 QStringLiteral("/mnt/data")),
             r.body.constData());
    // Above the per-file cap: refused before it reaches the sandbox.
    r = call("POST", base,
             multipart("B", "huge.bin", QByteArray(ContainersApi::kMaxFileBytes + 1, 'x')), kKeyA,
             "multipart/form-data; boundary=B");
    QCOMPARE(r.status, 413);
    QVERIFY2(r.json()[QStringLiteral("error")][QStringLiteral("message")].toString().contains(
                 QStringLiteral("the limit for a container file")),
             r.body.left(300).constData());
    QCOMPARE(callJson("POST", "/v1/containers", {}).status, 400); // name is required
    QCOMPARE(call("GET", base).status, 200);
}

void TestContainersApi::fileIdsAreCopiedFromTheUpstream() {
    upstream->setResponder([](const ScriptedUpstream::Request &request) {
        if (request.target == "/v1/files/file-1")
            return ScriptedUpstream::Response::json(
                {{QStringLiteral("id"), QStringLiteral("file-1")},
                 {QStringLiteral("filename"), QStringLiteral("../../etc/evil.csv")}});
        if (request.target == "/v1/files/file-1/content") {
            ScriptedUpstream::Response r;
            r.contentType = "text/csv";
            r.body = "x\n1\n";
            return r;
        }
        return ScriptedUpstream::Response::json(404, R"({"error":{"message":"No such File"}})");
    });
    const auto created =
        callJson("POST", "/v1/containers",
                 {{QStringLiteral("name"), QStringLiteral("n")},
                  {QStringLiteral("file_ids"), QJsonArray{QStringLiteral("file-1")}}});
    QCOMPARE(created.status, 200);
    const QString id = created.json()[QStringLiteral("id")].toString();
    const auto list = call("GET", "/v1/containers/" + id.toUtf8() + "/files");
    const QJsonArray data = list.json()[QStringLiteral("data")].toArray();
    QCOMPARE(data.size(), 1);
    // The upstream's file name is reduced to one safe path component.
    QCOMPARE(data[0][QStringLiteral("path")].toString(), QStringLiteral("/mnt/data/evil.csv"));
    QCOMPARE(data[0][QStringLiteral("source")].toString(), QStringLiteral("user"));
    bool sawAuth = false;
    for (const auto &r : upstream->requests())
        sawAuth |= r.target == "/v1/files/file-1/content" && r.header("authorization") == kKeyA;
    QVERIFY(sawAuth);
    const auto missing =
        callJson("POST", "/v1/containers",
                 {{QStringLiteral("name"), QStringLiteral("n")},
                  {QStringLiteral("file_ids"), QJsonArray{QStringLiteral("file-none")}}});
    QCOMPARE(missing.status, 400);
    QVERIFY(missing.body.contains("file-none"));
}

void TestContainersApi::plotsBecomeImagesFilesAndCitations() {
    const QString id = createContainer();
    upstream->enqueue(ScriptedUpstream::Response::json(
        functionCall(QStringLiteral("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\n"
                                    "plt.savefig('plot.png')\nprint('saved')"),
                     QStringLiteral("call_p"))));
    upstream->enqueue(ScriptedUpstream::Response::json(
        message(QStringLiteral("Chart: sandbox:/mnt/data/plot.png"))));
    const QJsonObject request{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), QStringLiteral("plot")},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                                {QStringLiteral("container"), id}}}}};
    const auto reply = callJson("POST", "/v1/responses", request);
    QCOMPARE(reply.status, 200);
    const QJsonArray output = reply.json()[QStringLiteral("output")].toArray();
    const QJsonArray outputs = output[0][QStringLiteral("outputs")].toArray();
    QCOMPARE(outputs.size(), 2);
    QCOMPARE(outputs[0][QStringLiteral("type")].toString(), QStringLiteral("logs"));
    // The client's logs are what the program printed...
    QCOMPARE(outputs[0][QStringLiteral("logs")].toString(), QStringLiteral("saved\n"));
    // ...and the model is told about the picture and the file.
    QString fedBack;
    for (const QJsonValue &item :
         upstream->requests().last().json()[QStringLiteral("input")].toArray())
        if (item[QStringLiteral("type")].toString() == QLatin1String("function_call_output"))
            fedBack = item[QStringLiteral("output")].toString();
    QVERIFY2(fedBack.startsWith(QStringLiteral("saved\n")) &&
                 fedBack.contains(QStringLiteral("image-1.png")) &&
                 fedBack.contains(QStringLiteral("/mnt/data/plot.png")),
             qPrintable(fedBack));
    QCOMPARE(outputs[1].toObject().keys(),
             (QStringList{QStringLiteral("type"), QStringLiteral("url")}));
    const QString url = outputs[1][QStringLiteral("url")].toString();
    QVERIFY(url.startsWith(QStringLiteral("data:image/png;base64,")));
    QVERIFY(QByteArray::fromBase64(url.section(u',', 1).toLatin1()).startsWith(kPngMagic));

    const QJsonArray annotations =
        output[1][QStringLiteral("content")][0][QStringLiteral("annotations")].toArray();
    QCOMPARE(annotations.size(), 1);
    const QString fileId = annotations[0][QStringLiteral("file_id")].toString();
    const auto file = call("GET", "/v1/containers/" + id.toUtf8() + "/files/" + fileId.toUtf8());
    QCOMPARE(file.json()[QStringLiteral("source")].toString(), QStringLiteral("assistant"));
    const auto content =
        call("GET", "/v1/containers/" + id.toUtf8() + "/files/" + fileId.toUtf8() + "/content");
    QVERIFY(content.body.startsWith(kPngMagic));
    QCOMPARE(content.body.size(), file.json()[QStringLiteral("bytes")].toInteger());
}

// More files than one page (and than the old 1,000-entry listing): every one reachable by id
// and listed once when an SDK pages on with after=last_id.
void TestContainersApi::filesListPagesThroughEveryFile() {
    const QString id = createContainer();
    const QByteArray base = "/v1/containers/" + id.toUtf8() + "/files";
    const auto uploaded = call("POST", base, multipart("B", "upload.csv", "a,b\n"), kKeyA,
                               "multipart/form-data; boundary=B");
    QCOMPARE(uploaded.status, 200);
    const QString uploadId = uploaded.json()[QStringLiteral("id")].toString();
    upstream->enqueue(ScriptedUpstream::Response::json(functionCall(
        QStringLiteral("for i in range(1500):\n    open('f%04d.txt' % i, 'w').write('x')\n"
                       "print('made')"),
        QStringLiteral("call_many"))));
    upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("done"))));
    const QJsonObject request{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), QStringLiteral("make files")},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                                {QStringLiteral("container"), id}}}}};
    QCOMPARE(callJson("POST", "/v1/responses", request).status, 200);

    const auto first = call("GET", base);
    QCOMPARE(first.status, 200);
    QCOMPARE(first.json()[QStringLiteral("data")].toArray().size(), 20); // OpenAI's default
    QCOMPARE(first.json()[QStringLiteral("has_more")].toBool(), true);
    QSet<QString> seen;
    QByteArray after;
    int pages = 0;
    for (;;) {
        QByteArray path = base + "?limit=100";
        if (!after.isEmpty())
            path += "&after=" + after;
        const auto page = call("GET", path);
        QCOMPARE(page.status, 200);
        const QJsonObject list = page.json();
        const QJsonArray data = list[QStringLiteral("data")].toArray();
        QVERIFY(data.size() <= 100);
        for (const QJsonValue &file : data)
            seen.insert(file[QStringLiteral("id")].toString());
        ++pages;
        if (!list[QStringLiteral("has_more")].toBool())
            break;
        QCOMPARE(data.size(), 100);
        QCOMPARE(list[QStringLiteral("last_id")].toString(),
                 data.last()[QStringLiteral("id")].toString());
        after = list[QStringLiteral("last_id")].toString().toUtf8();
        QVERIFY(pages < 20);
    }
    QCOMPARE(seen.size(), 1501); // the issue's 1,500 files and the upload
    QCOMPARE(pages, 16);
    QVERIFY(seen.contains(uploadId));
    QCOMPARE(call("GET", base + '/' + uploadId.toUtf8() + "/content").body, QByteArray("a,b\n"));
}

void TestContainersApi::badPageQueriesAreRefused_data() {
    QTest::addColumn<QByteArray>("query");
    QTest::newRow("limit 0") << QByteArray("limit=0");
    QTest::newRow("limit 101") << QByteArray("limit=101");
    QTest::newRow("limit text") << QByteArray("limit=ten");
    QTest::newRow("unknown after") << QByteArray("after=cfile_nope");
}

void TestContainersApi::badPageQueriesAreRefused() {
    QFETCH(QByteArray, query);
    const QString id = createContainer();
    const QList<QByteArray> paths{"/v1/containers/" + id.toUtf8() + "/files?" + query,
                                  "/v1/containers?" + query};
    for (const QByteArray &path : paths) {
        const auto r = call("GET", path);
        QCOMPARE(r.status, 400);
        QCOMPARE(r.json()[QStringLiteral("error")][QStringLiteral("type")].toString(),
                 QStringLiteral("invalid_request_error"));
    }
}

// A name the sandbox's file system cannot hold (over NAME_MAX in UTF-8) is the client's 400,
// with an OpenAI error saying why, not a 502 from the sandbox.
void TestContainersApi::overlongFileNameIs400() {
    const QString id = createContainer();
    const QByteArray base = "/v1/containers/" + id.toUtf8() + "/files";
    const QByteArray name = QString(200, QChar(0xe9)).toUtf8(); // 400 bytes
    const auto r =
        call("POST", base, multipart("B", name, "x"), kKeyA, "multipart/form-data; boundary=B");
    QCOMPARE(r.status, 400);
    const QJsonObject error = r.json()[QStringLiteral("error")].toObject();
    QCOMPARE(error[QStringLiteral("type")].toString(), QStringLiteral("invalid_request_error"));
    QVERIFY2(error[QStringLiteral("message")].toString().contains(QStringLiteral("255")),
             r.body.constData());
    QCOMPARE(call("GET", base).status, 200);
}

// Code replaces an already-listed file with a FIFO after the run's listing: its download is a
// quick 404, never a request that hangs.
void TestContainersApi::fileReplacedByAFifoIs404AtOnce() {
    const QString id = createContainer();
    const QByteArray base = "/v1/containers/" + id.toUtf8() + "/files";
    const auto uploaded = call("POST", base, multipart("B", "data.csv", "a,b\n"), kKeyA,
                               "multipart/form-data; boundary=B");
    QCOMPARE(uploaded.status, 200);
    const QByteArray content =
        base + '/' + uploaded.json()[QStringLiteral("id")].toString().toUtf8() + "/content";
    const auto kept = call("POST", base, multipart("B", "keep.csv", "k\n"), kKeyA,
                           "multipart/form-data; boundary=B");
    QCOMPARE(kept.status, 200);
    const QByteArray keep =
        base + '/' + kept.json()[QStringLiteral("id")].toString().toUtf8() + "/content";
    // A thread of the sandbox's interpreter does it once the run (and its listing) is over.
    upstream->enqueue(ScriptedUpstream::Response::json(functionCall(
        QStringLiteral("import os, threading\n"
                       "def swap():\n    os.remove('data.csv')\n    os.mkfifo('data.csv')\n"
                       "threading.Timer(0.2, swap).start()"),
        QStringLiteral("call_fifo"))));
    upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("done"))));
    const QJsonObject request{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), QStringLiteral("swap")},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                                {QStringLiteral("container"), id}}}}};
    QCOMPARE(callJson("POST", "/v1/responses", request).status, 200);
    // Until the swap the file downloads; after it, 404 (each answer within the client's wait).
    int status = 0;
    QVERIFY(QTest::qWaitFor(
        [&] {
            status = call("GET", content).status;
            return status != 200;
        },
        30000));
    QCOMPARE(status, 404);
    QCOMPARE(call("GET", base).status, 200); // the container goes on
    // ... with its other files: the FIFO cost neither the interpreter nor /mnt/data.
    QCOMPARE(call("GET", keep).body, QByteArray("k\n"));
}

// With sandbox.max_live 3 and max_sessions 2: a key that holds both session slots gets a
// retryable 429 for a third container (not a 502); a second key, below its share, still gets
// one (the first key's least recently used goes); a one-shot code run from a third key is
// served from the slot kept for it; expires_after is capped at the configured maximum.
// The same stack as init(), with a `sandbox:` mapping of the test's own.
void TestContainersApi::restartWith(const QByteArray &sandboxYaml) {
    cleanup();
    upstream = std::make_unique<ScriptedUpstream>();
    QVERIFY(upstream->listen());
    bus = std::make_unique<EventBus>();
    ProxyConfig config;
    config.port = 0;
    QString error;
    QVERIFY2(config.loadYaml(YamlDocument::fromText(sandboxYaml), QProcessEnvironment(), &error),
             qPrintable(error));
    config.defaultRoute = ProxyConfig::routeForUpstream(upstream->baseUrl(), &error);
    QVERIFY2(config.defaultRoute, qPrintable(error));
    server = std::make_unique<ProxyServer>(config);
    stack = std::make_unique<InterceptionStack>(server.get(), bus.get());
    LocalSandboxOptions options;
    options.poolSize = 0;
    QVERIFY2(stack->init(options, &error), qPrintable(error));
    QVERIFY(server->listen());
}

void TestContainersApi::containersKeepOneShotSlotsFree() {
    restartWith("sandbox:\n  max_live: 3\n  max_sessions: 2\n  max_expires_after_minutes: 30\n");

    const QJsonObject longLived{
        {QStringLiteral("name"), QStringLiteral("day")},
        {QStringLiteral("expires_after"),
         QJsonObject{{QStringLiteral("anchor"), QStringLiteral("last_active_at")},
                     {QStringLiteral("minutes"), 1440}}}};
    const auto first = callJson("POST", "/v1/containers", longLived);
    QCOMPARE(first.status, 200);
    QCOMPARE(first.json()[QStringLiteral("expires_after")][QStringLiteral("minutes")].toInt(), 30);
    QCOMPARE(callJson("POST", "/v1/containers", longLived).status, 200);
    const auto third = callJson("POST", "/v1/containers", longLived);
    QCOMPARE(third.status, 429);
    QCOMPARE(third.header("retry-after"), QByteArray("5"));
    QCOMPARE(third.json()[QStringLiteral("error")][QStringLiteral("code")].toString(),
             QStringLiteral("too_many_sandboxes"));
    QVERIFY2(third.json()[QStringLiteral("error")][QStringLiteral("message")].toString().contains(
                 QStringLiteral("sandbox.max_sessions")),
             third.body.constData());
    QCOMPARE(callJson("POST", "/v1/containers", longLived, kKeyB).status, 200);

    upstream->enqueue(ScriptedUpstream::Response::json(
        functionCall(QStringLiteral("print(6 * 7)"), QStringLiteral("call_one"))));
    upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("42"))));
    const QJsonObject oneShot{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), QStringLiteral("compute")},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                                {QStringLiteral("container"),
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}};
    const auto ran = callJson("POST", "/v1/responses", oneShot, "Bearer sk-a-fifth-identity-05");
    QCOMPARE(ran.status, 200);
    QVERIFY2(ran.body.contains("42"), ran.body.left(400).constData());
}

// Model code that patches what the driver used after a run (os.walk, to a sleep) must not
// keep its one-shot sandbox: the request ends (a client that waited gets its answer, one that
// hung up is cleaned up after) and the slot is free again. With max_live 1 a second one-shot
// run proves it.
void TestContainersApi::oneShotSandboxIsReleasedWhateverItsCodeDid_data() {
    QTest::addColumn<bool>("clientWaits");
    QTest::newRow("client waits") << true;
    QTest::newRow("client gone") << false;
}

void TestContainersApi::oneShotSandboxIsReleasedWhateverItsCodeDid() {
    QFETCH(bool, clientWaits);
    restartWith("sandbox:\n  max_live: 1\n");
    const auto oneShot = [this](const QString &code, const QString &callId) {
        upstream->enqueue(ScriptedUpstream::Response::json(functionCall(code, callId)));
        upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("done"))));
        return QJsonDocument(
                   QJsonObject{
                       {QStringLiteral("model"), QStringLiteral("gpt-5")},
                       {QStringLiteral("input"), QStringLiteral("run")},
                       {QStringLiteral("tools"),
                        QJsonArray{QJsonObject{
                            {QStringLiteral("type"), QStringLiteral("code_interpreter")},
                            {QStringLiteral("container"),
                             QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}})
            .toJson(QJsonDocument::Compact);
    };
    const QByteArray hostile =
        oneShot(QStringLiteral("import os, time\nos.walk = lambda *a, **k: time.sleep(10**6)\n"
                               "time.sleep(0.5)\nprint('patched')"),
                QStringLiteral("call_hostile"));
    SandboxRegistry *registry = stack->registry();
    if (clientWaits) {
        const auto reply = call("POST", "/v1/responses", hostile);
        QCOMPARE(reply.status, 200);
    } else {
        QSignalSpy created(registry, &SandboxRegistry::sandboxCreated);
        RawHttpClient client(server->port());
        client.request("POST", "/v1/responses", hostile,
                       {{"authorization", kKeyA}, {"content-type", "application/json"}});
        QVERIFY(created.wait(30000)); // its code is about to run
        client.close();
    }
    QTRY_COMPARE_WITH_TIMEOUT(registry->liveCount(), 0, 30000);
    const auto next = call("POST", "/v1/responses",
                           oneShot(QStringLiteral("print(6 * 7)"), QStringLiteral("call_next")),
                           "Bearer sk-another-identity-0003");
    QCOMPARE(next.status, 200);
}

QTEST_GUILESS_MAIN(TestContainersApi)
void TestContainersApi::expiresAfterIsTheContainersIdleTime() {
    const auto shortLived =
        callJson("POST", "/v1/containers",
                 {{QStringLiteral("name"), QStringLiteral("short")},
                  {QStringLiteral("expires_after"),
                   QJsonObject{{QStringLiteral("anchor"), QStringLiteral("last_active_at")},
                               {QStringLiteral("minutes"), 1}}}});
    QCOMPARE(shortLived.status, 200);
    const QString shortId = shortLived.json()[QStringLiteral("id")].toString();
    QCOMPARE(shortLived.json()[QStringLiteral("expires_after")][QStringLiteral("minutes")].toInt(),
             1);
    const QString defaultId = createContainer();
    QVERIFY(!shortId.isEmpty() && !defaultId.isEmpty());
    const auto shown = call("GET", "/v1/containers/" + shortId.toUtf8());
    QCOMPARE(shown.json()[QStringLiteral("expires_after")][QStringLiteral("minutes")].toInt(), 1);
    QCOMPARE(shown.json()[QStringLiteral("expires_after")][QStringLiteral("anchor")].toString(),
             QStringLiteral("last_active_at"));
    QCOMPARE(call("GET", "/v1/containers/" + defaultId.toUtf8())
                 .json()[QStringLiteral("expires_after")][QStringLiteral("minutes")]
                 .toInt(),
             int(SandboxRegistry::kIdleTtlMs / 60000));

    // Both real sandboxes are 61 s idle: past the short container's minute, well inside the
    // default 15. A sweep deletes the one and keeps the other.
    SandboxRegistry *registry = stack->registry();
    const qint64 later = registry->now() + 61 * 1000;
    registry->setClock([later] { return later; });
    QSignalSpy removed(registry, &SandboxRegistry::sandboxRemoved);
    registry->pruneExpired();
    QVERIFY(QTest::qWaitFor([&] { return removed.count() >= 1; }, 30000));
    registry->setClock({});
    QCOMPARE(removed.count(), 1);
    QCOMPARE(removed.at(0).at(0).value<SandboxEntry>().handle.id, shortId);
    QCOMPARE(removed.at(0).at(1).value<SandboxRemovalReason>(), SandboxRemovalReason::Expired);
    QCOMPARE(call("GET", "/v1/containers/" + shortId.toUtf8()).status, 404);
    QCOMPARE(call("GET", "/v1/containers/" + defaultId.toUtf8()).status, 200);
}

void TestContainersApi::badExpiresAfterIsRefused_data() {
    QTest::addColumn<QJsonValue>("expiresAfter");
    const auto e = [](const QJsonValue &anchor, const QJsonValue &minutes) {
        QJsonObject o;
        if (!anchor.isUndefined())
            o.insert(QStringLiteral("anchor"), anchor);
        if (!minutes.isUndefined())
            o.insert(QStringLiteral("minutes"), minutes);
        return QJsonValue(o);
    };
    const QString last = QStringLiteral("last_active_at");
    QTest::newRow("not an object") << QJsonValue(5);
    QTest::newRow("other anchor") << e(QStringLiteral("created_at"), 5);
    QTest::newRow("no anchor") << e(QJsonValue::Undefined, 5);
    QTest::newRow("no minutes") << e(last, QJsonValue::Undefined);
    QTest::newRow("minutes as text") << e(last, QStringLiteral("5"));
    QTest::newRow("zero minutes") << e(last, 0);
    QTest::newRow("fractional minutes") << e(last, 1.5);
    QTest::newRow("more than a day") << e(last, 24 * 60 + 1);
}

void TestContainersApi::badExpiresAfterIsRefused() {
    QFETCH(QJsonValue, expiresAfter);
    const int before = stack->registry()->size();
    const auto refused = callJson("POST", "/v1/containers",
                                  {{QStringLiteral("name"), QStringLiteral("x")},
                                   {QStringLiteral("expires_after"), expiresAfter}});
    QCOMPARE(refused.status, 400);
    QVERIFY2(refused.json()[QStringLiteral("error")][QStringLiteral("message")].toString().contains(
                 QStringLiteral("expires_after")),
             refused.body.constData());
    QCOMPARE(stack->registry()->size(), before); // no sandbox was made for it
}

#include "tst_containersapi.moc"
