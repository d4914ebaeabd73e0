#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace loopscope {

// The built-in scripted model ("loopscope-demo"), so a newcomer sees a whole code-execution loop
// with no key and no network. Deterministic: the same request gives the same answer.
// - Offered a function tool and no tool output yet: calls the tool (preferring
//   litellm_code_execution / a "code" parameter) with the Python of a fenced ```python block in
//   the last user message, or print(<expression>) for an arithmetic question ("what is 17*23?").
// - Once a tool output is present: answers in text using it ("The result is 391.").
// - Otherwise: a short, clearly labelled text answer.
// Speaks POST /responses and /chat/completions (JSON and SSE with stream:true) and GET /models
// in OpenAI's exact shapes, and POST /messages (+ /messages/count_tokens) in Anthropic's, with
// client tools (an input_schema) as its function tools.
class DemoModel {
public:
    static QString modelId() { return QStringLiteral("loopscope-demo"); }

    struct Reply {
        int status = 200;
        QByteArray contentType;
        QList<QByteArray> chunks; // one JSON body, or one SSE frame per chunk
    };
    // `path` is relative to the API base, e.g. "/responses".
    static Reply handle(const QByteArray &method, const QString &path, const QByteArray &body);

    // The Python the demo would run for a user message, or empty when it sees none.
    static QString codeForMessage(const QString &text);
    // The text answer built from a tool output.
    static QString answerForToolOutput(const QString &output);
};

} // namespace loopscope
