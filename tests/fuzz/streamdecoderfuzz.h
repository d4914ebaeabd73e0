#pragma once
// The stream decoders of the three dialects fed arbitrary bytes (tests/fuzz/<dialect>stream).
// The first byte picks where the bytes are split, as a socket may split them; the rest is the
// stream. Invariants: the one SSE reader gives the same events whatever the split, each with a
// name and data; the dialect's codec adds them up without crashing; and what it adds up to,
// encoded again by the same codec, reads back with as many items (output items, content blocks,
// tool calls) as it had.
#include "conversation/chatstreamwriter.h"
#include "conversation/dialect.h"
#include "conversation/messagescodec.h"
#include "conversation/responsesstreamwriter.h"
#include "conversation/ssedecoder.h"
#include "fuzzsupport.h"

#include <QJsonArray>

namespace loopscope::fuzz {

inline QJsonArray readStream(const QByteArray &bytes, qsizetype split) {
    SseDecoder decoder;
    QJsonArray events;
    decoder.feed(bytes.left(split), events);
    decoder.feed(bytes.mid(split), events);
    decoder.finish(events);
    return events;
}

inline qsizetype itemCount(Dialect dialect, const QJsonObject &response) {
    switch (dialect) {
    case Dialect::ChatCompletions:
        return QJsonValue(response)[u"choices"][0][u"message"][u"tool_calls"].toArray().size();
    case Dialect::Messages:
        return response.value(QStringLiteral("content")).toArray().size();
    case Dialect::Responses:
        break;
    }
    return response.value(QStringLiteral("output")).toArray().size();
}

inline QByteArray encodeAgain(Dialect dialect, const QJsonObject &response) {
    switch (dialect) {
    case Dialect::ChatCompletions:
        return ChatStreamWriter::replay(response, QJsonValue());
    case Dialect::Messages:
        return MessagesCodec::streamFromMessage(response);
    case Dialect::Responses:
        break;
    }
    ResponsesStreamWriter writer;
    QByteArray out = writer.begin({});
    return out + writer.finish(response);
}

inline int fuzzStreamDecoder(const uint8_t *data, size_t size, Dialect dialect) {
    FuzzInput input(data, size);
    const qsizetype at = input.byte();
    const QByteArray stream = input.rest();
    const QJsonArray events = readStream(stream, at);
    FUZZ_CHECK(events == readStream(stream, stream.size()));
    for (const QJsonValue &e : events) {
        FUZZ_CHECK(e.toObject().value(QStringLiteral("event")).isString());
        FUZZ_CHECK(e.toObject().contains(QStringLiteral("data")));
    }
    const QJsonObject response = responseFromEvents(dialect, events);
    const bool again = dialect == Dialect::ChatCompletions
                           ? response.value(QStringLiteral("choices")).isArray()
                           : !response.isEmpty();
    if (again) {
        const QJsonObject reread =
            responseFromEvents(dialect, readStream(encodeAgain(dialect, response), 0));
        FUZZ_CHECK(itemCount(dialect, reread) == itemCount(dialect, response));
    }
    return 0;
}

} // namespace loopscope::fuzz
