#pragma once

#include "conversation/dialectkind.h"

#include <QJsonValue>
#include <QList>
#include <QMetaType>
#include <QString>

#include <optional>

namespace loopscope {

// One item of a conversation, whatever dialect carried it (dialects.md §1): a message, the
// model's reasoning, a tool call, a tool's result, a code run, or an item no codec knows.
// Every item keeps the wire JSON it was decoded from in `wire`, so a reader that needs a field
// the model does not name (a citation, cache_control, a vendor extension) still has it, and an
// Opaque item round-trips byte for byte.
struct ConversationItem {
    enum class Kind {
        Message,    // a system/developer/user/assistant message and its parts
        Reasoning,  // Responses `reasoning`, Messages `thinking` / `redacted_thinking`
        ToolCall,   // function, custom and hosted tool calls (Messages tool_use/server_tool_use)
        ToolResult, // function_call_output, Chat role "tool", Messages tool_result
        CodeRun,    // code_interpreter_call, Messages *_code_execution_tool_result
        Opaque,     // anything else: only `wire`
    };
    enum class ToolKind { Function, Custom, Hosted };

    // A part of a message's (or a tool result's) content.
    struct Part {
        enum class Kind { Text, Refusal, Image, File, Audio, Other };
        Kind kind = Kind::Text;
        QString text;     // Text, Refusal
        QString filename; // File, when named
        QJsonValue wire;  // the part as sent
        // An Image part's picture as one URL, from any dialect's shape (image_url, input_image,
        // an Anthropic image's url or base64 source as a data: URL); "" when it has none.
        QString imageUrl() const;
        friend bool operator==(const Part &, const Part &) = default;
    };

    Kind kind = Kind::Opaque;
    QString id;   // the item's own id, when the dialect gives one
    QString role; // Message: "system", "developer", "user", "assistant"

    QList<Part> parts; // Message; ToolResult when its output is parts

    // Reasoning: the readable summary or thinking text, and what the vendor needs back.
    QStringList summary;
    QString encryptedContent; // Responses encrypted_content, Messages thinking signature
    bool redacted = false;    // Messages redacted_thinking (its data in encryptedContent)

    // ToolCall / ToolResult / CodeRun.
    QString callId;
    QString name; // ToolCall: the tool's name
    ToolKind toolKind = ToolKind::Function;
    QJsonValue arguments; // ToolCall: a JSON string (OpenAI) or an object (Messages input)
    QJsonValue output;    // ToolResult: a string, or the wire's parts/blocks
    bool isError = false; // ToolResult / CodeRun

    // CodeRun.
    QString container;
    QString code;
    QString stdoutText;
    QString stderrText;
    int returnCode = 0;
    int imageCount = 0;

    QJsonValue wire; // the item exactly as decoded
    // The dialect `wire` is in (none for an item made here): an encoder of that dialect writes
    // the model's fields over it, so what the model does not name goes back as it came.
    std::optional<Dialect> wireDialect;

    // `wire` as the base for an encoder of `dialect`: the object when it is in that dialect,
    // else {} (another dialect's fields must not leak into this one's JSON).
    QJsonObject wireIn(Dialect dialect) const;

    // A ToolCall's arguments as OpenAI's JSON text: a string as it is, an object (Anthropic's
    // input) compact, anything else "{}".
    QString argumentsText() const;

    // The message's text parts joined by '\n' (refusals, images and files left out).
    QString text() const;

    // Message content as parts, in either vendor's vocabulary: a string is one text part; an
    // array's parts by type (text/input_text/output_text, refusal, image/input_image/image_url,
    // file/input_file/document, input_audio); anything else one Other part.
    static QList<Part> partsOf(const QJsonValue &content);
    // An error body's message: `error.message` (OpenAI and Anthropic), `error` as a string, or
    // the error object as compact JSON; "" when the body is not an error.
    static QString errorMessageOf(const QJsonObject &body);
    friend bool operator==(const ConversationItem &, const ConversationItem &) = default;
};

} // namespace loopscope

Q_DECLARE_METATYPE(loopscope::ConversationItem)
