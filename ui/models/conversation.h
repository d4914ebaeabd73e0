#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace loopscope {

// The conversation of one flow, per iteration, decoded for people: what was sent to the model,
// what it replied (tool-call arguments parsed, the code of litellm_code_execution as Python),
// the output fed back and the final answer. Built from the flow JSON of FlowQuery::flow (spec
// "Flows"): Responses and Chat Completions bodies, streamed (SSE events) or not, intercepted
// or passed through. A plain value: ConversationModel shows it, FlowDiff renders it as text.
class Conversation {
public:
    enum class Section { Sent, Reply, FedBack, Final };
    enum class Kind {
        Instructions, // Responses `instructions`
        Message,      // a message with a role (system/developer/user/assistant/tool)
        CodeCall,     // litellm_code_execution / code_interpreter_call: Python source
        ToolCall,     // a function call (arguments decoded); clientSide when the client runs it
        ToolOutput,   // function_call_output / role "tool" / code_interpreter_call outputs
        CodeRun,      // a code_run hop: the exact output fed back to the model
        Reasoning,
        Error,
        Other, // an item of a type this view does not know: pretty JSON
    };
    enum class Format { Text, Json, Python };

    struct Entry {
        Section section = Section::Sent;
        Kind kind = Kind::Message;
        QString role;  // "user", "assistant", "tool", "system", "model", …
        QString title; // one line: "user", "code (call_1)", "function call get_weather (call_2)"
        QString text;  // the readable body
        Format format = Format::Text;
        QString callId;
        QString note;            // e.g. "arguments are not valid JSON"
        bool isNew = true;       // Sent: new since the previous iteration
        bool clientSide = false; // ToolCall: a function the client runs (not Loopscope)

        // Identity for "what changed" (not the section or the new flag).
        bool sameContent(const Entry &other) const;
    };

    struct Iteration {
        int index = 0;
        QList<Entry> sent;  // everything sent (the new ones flagged isNew)
        QList<Entry> reply; // the model's reply
        QList<Entry> fedBack;
        int status = 0;
        double latencyMs = 0;
        QJsonObject usage;
        int newCount() const;
    };

    static Conversation fromFlow(const QJsonObject &flow);
    // What a request body sends (its instructions, then its items), in the dialect of `api`
    // (a flow's "api") or, failing that, of the body's shape.
    static QList<Entry> requestEntries(const QJsonValue &body, const QString &api);
    // What a response hop (client_response or upstream_response: a JSON body or SSE events)
    // answered, or the error it failed with; `requestBody` tells the dialect with `api`.
    static QList<Entry> answerEntries(const QJsonObject &hop, const QString &api,
                                      const QJsonObject &requestBody);

    bool isEmpty() const { return m_iterations.isEmpty() && m_final.isEmpty(); }
    QString flowId() const { return m_flowId; }
    QString api() const { return m_api; }
    const QList<Iteration> &iterations() const { return m_iterations; }
    const QList<Entry> &finalAnswer() const { return m_final; }
    int finalStatus() const { return m_finalStatus; }

    // Plain-text renderings (the diff compares these; tests read them). allSent=false keeps
    // only the items new since the previous iteration. iterationText has no "Iteration N"
    // heading (a diff of two iterations would show it as changed); text() adds them.
    QString iterationText(int index, bool allSent = true) const;
    QString finalText() const;
    QString text(bool allSent = true) const; // every iteration, then the final answer

    static QString sectionName(Section section);
    static QString entryText(const Entry &entry); // "[title]\nbody" as the renderings show it
    static QString entriesText(const QList<Entry> &entries);

private:
    QString m_flowId;
    QString m_api;
    QList<Iteration> m_iterations;
    QList<Entry> m_final;
    int m_finalStatus = 0;
};

} // namespace loopscope
