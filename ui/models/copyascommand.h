#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QPair>
#include <QString>

#include <optional>

namespace loopscope {

// "Copy as curl / Python / Node" for a flow's client request: a command or script that re-sends
// the request to Loopscope. Qt Core only, so the inspector and the requests list's row menu share
// it. Secrets stay masked: a masked credential header becomes an environment-variable placeholder
// (`Authorization: Bearer $OPENAI_API_KEY`), never the masked text and never an unmasked value.
class CopyAsCommand {
public:
    enum class Format { Curl, PythonRequests, PythonOpenAi, NodeFetch };

    struct Header {
        QString name;
        QString value;          // as sent, unless `variable` is set
        QString variable;       // environment variable holding the secret (e.g. OPENAI_API_KEY)
        QString variablePrefix; // text before the variable ("Bearer ")
    };
    struct Request {
        QString method = QStringLiteral("POST");
        QString url; // absolute
        QList<Header> headers;
        QJsonValue body; // JSON object/array, a string (sent as is) or null/undefined (none)
        QString api;     // summary "api": responses|chat_completions|… (for the openai SDK)
    };

    // The flow's client request (FlowQuery::flow JSON). `baseUrl` is where Loopscope listens
    // ("http://127.0.0.1:4000"); empty → the request's Host header, else 127.0.0.1:4000.
    // nullopt when the flow has no client_request hop.
    static std::optional<Request> fromFlow(const QJsonObject &flow, const QString &baseUrl = {});

    static QString generate(Format format, const Request &request);
    // fromFlow + generate; empty when the flow has no client request.
    static QString forFlow(const QJsonObject &flow, Format format, const QString &baseUrl = {});
    static QString formatName(Format format); // "curl", "Python (requests)", …

    // Quoting primitives (public for tests and other generators).
    static QString shellQuote(const QString &text);   // POSIX sh single quotes
    static QString pythonString(const QString &text); // "…" literal, ASCII-safe escapes
    static QString jsString(const QString &text);     // "…" literal (JSON string, also JS)
    static QString pythonLiteral(const QJsonValue &value, int indent = 0);
    static QString jsLiteral(const QJsonValue &value, int indent = 0);
    // The exact bytes the generated commands send as the body.
    static QByteArray bodyBytes(const QJsonValue &body);
};

} // namespace loopscope
