// The SSE writers and reader, round trip: arbitrary JSON (or arbitrary text placed in the fields
// that reach the wire) → ChatStreamWriter::replay / ResponsesStreamWriter → bytes → the SDK-style
// frame parser of tests/loop/sseparser.h. Invariants: every frame carries one JSON object (or
// [DONE]); chat: one [DONE], last, all chunks share the id, the streamed text equals the
// message text; Responses: one frame per event written, each named after its type, numbered
// 0..n-1, ending with exactly one terminal event that carries the response's id.
#include "conversation/chatstreamwriter.h"
#include "conversation/responsesstreamwriter.h"
#include "fuzzsupport.h"
#include "loop/sseparser.h"

#include <QJsonArray>
#include <QJsonDocument>

using namespace loopscope;
using loopscope::fuzz::FuzzInput;

namespace {

void checkChat(const QJsonObject &completion) {
    const QJsonValue options = completion.value(QStringLiteral("stream_options"));
    const QList<SseFrame> frames = parseSse(ChatStreamWriter::replay(completion, options));
    FUZZ_CHECK(!frames.isEmpty());
    FUZZ_CHECK(frames.last().data == "[DONE]");
    QHash<int, QString> text; // per choice index
    for (qsizetype i = 0; i + 1 < frames.size(); ++i) {
        FUZZ_CHECK(frames.at(i).data != "[DONE]");
        FUZZ_CHECK(frames.at(i).event.isEmpty());
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(frames.at(i).data, &error);
        FUZZ_CHECK(error.error == QJsonParseError::NoError && doc.isObject());
        const QJsonObject chunk = doc.object();
        FUZZ_CHECK(chunk.value(QStringLiteral("object")) ==
                   QJsonValue(QStringLiteral("chat.completion.chunk")));
        FUZZ_CHECK(chunk.value(QStringLiteral("id")) == completion.value(QStringLiteral("id")));
        for (const QJsonValue &choice : chunk.value(QStringLiteral("choices")).toArray()) {
            const QJsonObject c = choice.toObject();
            text[c.value(QStringLiteral("index")).toInt()] += c.value(QStringLiteral("delta"))
                                                                  .toObject()
                                                                  .value(QStringLiteral("content"))
                                                                  .toString();
        }
    }
    // With one choice per index, the streamed text is the message text.
    QHash<int, int> seen;
    for (const QJsonValue &choice : completion.value(QStringLiteral("choices")).toArray())
        ++seen[choice.toObject().value(QStringLiteral("index")).toInt(0)];
    for (const QJsonValue &choice : completion.value(QStringLiteral("choices")).toArray()) {
        const QJsonObject c = choice.toObject();
        const int index = c.value(QStringLiteral("index")).toInt(0);
        if (seen.value(index) == 1)
            FUZZ_CHECK(text.value(index) == c.value(QStringLiteral("message"))
                                                .toObject()
                                                .value(QStringLiteral("content"))
                                                .toString());
    }
}

void checkResponses(const QJsonObject &spec) {
    ResponsesStreamWriter writer;
    QByteArray body = writer.begin(spec.value(QStringLiteral("skeleton")).toObject());
    for (const QJsonValue &call : spec.value(QStringLiteral("calls")).toArray()) {
        body += writer.codeCallStarted(call.toObject());
        body += writer.codeCallFinished(call.toObject());
    }
    const bool failWithError = spec.value(QStringLiteral("error")).isString();
    if (failWithError)
        body += writer.error(QStringLiteral("server_error"),
                             spec.value(QStringLiteral("error")).toString());
    else
        body += writer.finish(spec.value(QStringLiteral("final")).toObject());

    const QList<SseFrame> frames = parseSse(body);
    FUZZ_CHECK(frames.size() == writer.eventCount());
    int terminal = 0;
    for (qsizetype i = 0; i < frames.size(); ++i) {
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(frames.at(i).data, &error);
        FUZZ_CHECK(error.error == QJsonParseError::NoError && doc.isObject());
        const QJsonObject event = doc.object();
        FUZZ_CHECK(event.value(QStringLiteral("type")).toString() == frames.at(i).event);
        FUZZ_CHECK(event.value(QStringLiteral("sequence_number")).toInteger(-1) == i);
        const QString type = frames.at(i).event;
        if (type == QLatin1String("response.completed") ||
            type == QLatin1String("response.incomplete") ||
            type == QLatin1String("response.failed") || type == QLatin1String("error")) {
            ++terminal;
            FUZZ_CHECK(i == frames.size() - 1);
            if (type != QLatin1String("error"))
                FUZZ_CHECK(event.value(QStringLiteral("response"))
                               .toObject()
                               .value(QStringLiteral("id"))
                               .toString() == writer.responseId());
        }
    }
    FUZZ_CHECK(terminal == 1);
}

// Arbitrary text where it reaches the wire: content, code, logs, ids, error messages.
QJsonObject fromText(const QString &text, quint8 shape) {
    const QJsonObject message{
        {QStringLiteral("id"), text.left(8)},
        {QStringLiteral("type"), QStringLiteral("message")},
        {QStringLiteral("role"), QStringLiteral("assistant")},
        {QStringLiteral("content"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("output_text")},
                                {QStringLiteral("text"), text}}}}};
    const QJsonObject logs{{QStringLiteral("type"), QStringLiteral("logs")},
                           {QStringLiteral("logs"), text}};
    QJsonObject call;
    call.insert(QStringLiteral("id"), QString(QStringLiteral("ci_") + text.left(4)));
    call.insert(QStringLiteral("type"), QStringLiteral("code_interpreter_call"));
    call.insert(QStringLiteral("code"), text);
    call.insert(QStringLiteral("container_id"), text.right(3));
    call.insert(QStringLiteral("outputs"), QJsonArray{logs});
    QJsonObject spec{
        {QStringLiteral("id"), text},
        {QStringLiteral("choices"),
         QJsonArray{QJsonObject{
             {QStringLiteral("message"), QJsonObject{{QStringLiteral("content"), text}}}}}},
        {QStringLiteral("calls"), QJsonArray{call}},
        {QStringLiteral("final"),
         QJsonObject{{QStringLiteral("status"),
                      shape % 3 == 0 ? QStringLiteral("incomplete") : QStringLiteral("completed")},
                     {QStringLiteral("output"), QJsonArray{call, message}}}}};
    if (shape % 5 == 0)
        spec.insert(QStringLiteral("error"), text);
    if (shape % 2 == 0)
        spec.insert(QStringLiteral("stream_options"),
                    QJsonObject{{QStringLiteral("include_usage"), true}});
    return spec;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzInput input(data, size);
    const QJsonDocument doc = QJsonDocument::fromJson(input.all());
    QJsonObject spec;
    if (doc.isObject()) {
        spec = doc.object();
    } else {
        const quint8 shape = input.byte();
        spec = fromText(QString::fromUtf8(input.rest()), shape);
    }
    checkChat(spec);
    checkResponses(spec);
    // The reader itself on raw bytes (CRLF, stray fields, no final blank line).
    (void)parseSse(input.all());
    return 0;
}
