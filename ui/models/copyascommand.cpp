#include "models/copyascommand.h"

#include "inspect/credentialpolicy.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace loopscope {

using namespace Qt::StringLiterals;

namespace {

const QChar kMaskMark(0x2026); // "…": CredentialPolicy's mark of a masked value

// Headers the client library or the transport computes itself; copying them would be wrong
// (a stale Content-Length) or pointless.
bool isTransportHeader(const QString &lowerName) {
    static const QStringList names{
        u"host"_s,       u"content-length"_s,  u"connection"_s, u"transfer-encoding"_s,
        u"keep-alive"_s, u"expect"_s,          u"upgrade"_s,    u"accept-encoding"_s,
        u"te"_s,         u"proxy-connection"_s};
    return names.contains(lowerName);
}

QString envNameFor(const QString &lowerName) {
    if (lowerName == u"authorization" || lowerName == u"api-key")
        return u"OPENAI_API_KEY"_s;
    QString name = lowerName.toUpper();
    name.replace(QRegularExpression(u"[^A-Z0-9]"_s), u"_"_s);
    return name;
}

QString numberText(double d) {
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9007199254740992.0)
        return QString::number(qint64(d));
    return QString::number(d, 'g', 17);
}

QString spaces(int n) {
    return QString(n, u' ');
}

enum class Dialect { Python, Js };

QString literal(const QJsonValue &value, int indent, int step, Dialect dialect) {
    const auto str = [dialect](const QString &s) {
        return dialect == Dialect::Python ? CopyAsCommand::pythonString(s)
                                          : CopyAsCommand::jsString(s);
    };
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        return dialect == Dialect::Python ? u"None"_s : u"null"_s;
    case QJsonValue::Bool:
        if (dialect == Dialect::Python)
            return value.toBool() ? u"True"_s : u"False"_s;
        return value.toBool() ? u"true"_s : u"false"_s;
    case QJsonValue::Double:
        return numberText(value.toDouble());
    case QJsonValue::String:
        return str(value.toString());
    case QJsonValue::Array: {
        const QJsonArray array = value.toArray();
        if (array.isEmpty())
            return u"[]"_s;
        QString out = u"[\n"_s;
        for (const QJsonValue &v : array)
            out += spaces(indent + step) % literal(v, indent + step, step, dialect) % u",\n";
        return out % spaces(indent) % u']';
    }
    case QJsonValue::Object: {
        const QJsonObject object = value.toObject();
        if (object.isEmpty())
            return u"{}"_s;
        QString out = u"{\n"_s;
        for (auto it = object.constBegin(); it != object.constEnd(); ++it)
            out += spaces(indent + step) % str(it.key()) % u": " %
                   literal(it.value(), indent + step, step, dialect) % u",\n";
        return out % spaces(indent) % u'}';
    }
    }
    return {};
}

bool hasJsonBody(const QJsonValue &body) {
    return body.isObject() || body.isArray();
}

bool hasBody(const QJsonValue &body) {
    return hasJsonBody(body) || (body.isString() && !body.toString().isEmpty());
}

// "prefix" + $VAR in each language, or the plain value.
QString pythonHeaderValue(const CopyAsCommand::Header &h) {
    if (h.variable.isEmpty())
        return CopyAsCommand::pythonString(h.value);
    const QString env = u"os.environ["_s % CopyAsCommand::pythonString(h.variable) % u']';
    return h.variablePrefix.isEmpty()
               ? env
               : CopyAsCommand::pythonString(h.variablePrefix) % u" + " % env;
}

QString jsHeaderValue(const CopyAsCommand::Header &h) {
    if (h.variable.isEmpty())
        return CopyAsCommand::jsString(h.value);
    const QString env = u"process.env."_s % h.variable;
    return h.variablePrefix.isEmpty() ? env
                                      : CopyAsCommand::jsString(h.variablePrefix) % u" + " % env;
}

// Inside sh double quotes only these four keep a meaning.
QString shellDoubleQuoted(const QString &text) {
    QString out;
    for (const QChar c : text) {
        if (c == u'\\' || c == u'"' || c == u'$' || c == u'`')
            out += u'\\';
        out += c;
    }
    return out;
}

bool usesEnvironment(const CopyAsCommand::Request &request) {
    return std::any_of(request.headers.cbegin(), request.headers.cend(),
                       [](const CopyAsCommand::Header &h) { return !h.variable.isEmpty(); });
}

bool hasHeader(const CopyAsCommand::Request &request, const QString &lowerName) {
    return std::any_of(request.headers.cbegin(), request.headers.cend(),
                       [&](const CopyAsCommand::Header &h) {
                           return h.name.compare(lowerName, Qt::CaseInsensitive) == 0;
                       });
}

QString curl(const CopyAsCommand::Request &r) {
    QStringList parts{u"curl "_s % CopyAsCommand::shellQuote(r.url)};
    const bool body = hasBody(r.body);
    const QString method = r.method.toUpper();
    if (!((method == u"GET" && !body) || (method == u"POST" && body)))
        parts << u"-X "_s % CopyAsCommand::shellQuote(method);
    for (const CopyAsCommand::Header &h : r.headers) {
        if (h.variable.isEmpty())
            parts << u"-H "_s % CopyAsCommand::shellQuote(h.name % u": " % h.value);
        else // double quotes so the shell expands the variable, nothing else
            parts << u"-H \""_s % shellDoubleQuoted(h.name % u": " % h.variablePrefix) % u"${" %
                         h.variable % u"}\"";
    }
    if (hasJsonBody(r.body) && !hasHeader(r, u"content-type"_s))
        parts << u"-H 'content-type: application/json'"_s;
    if (r.body.isObject() && r.body.toObject().value(u"stream"_s).toBool())
        parts << u"--no-buffer"_s;
    if (body)
        parts << u"--data-raw "_s %
                     CopyAsCommand::shellQuote(QString::fromUtf8(CopyAsCommand::bodyBytes(r.body)));
    return parts.join(u" \\\n  "_s) % u'\n';
}

QString pythonRequests(const CopyAsCommand::Request &r, const QString &note = {}) {
    QString out;
    if (!note.isEmpty())
        out += u"# "_s % note % u'\n';
    if (usesEnvironment(r))
        out += u"import os\n\n"_s;
    out += u"import requests\n\nresponse = requests.request(\n"_s;
    out += u"    "_s % CopyAsCommand::pythonString(r.method.toUpper()) % u",\n";
    out += u"    "_s % CopyAsCommand::pythonString(r.url) % u",\n";
    if (!r.headers.isEmpty()) {
        out += u"    headers={\n"_s;
        for (const CopyAsCommand::Header &h : r.headers)
            out += u"        "_s % CopyAsCommand::pythonString(h.name) % u": " %
                   pythonHeaderValue(h) % u",\n";
        out += u"    },\n"_s;
    }
    if (hasJsonBody(r.body))
        out += u"    json="_s % CopyAsCommand::pythonLiteral(r.body, 4) % u",\n";
    else if (hasBody(r.body))
        out += u"    data="_s % CopyAsCommand::pythonString(r.body.toString()) %
               u".encode(\"utf-8\"),\n";
    out += u")\nprint(response.status_code)\nprint(response.text)\n"_s;
    return out;
}

QString pythonOpenAi(const CopyAsCommand::Request &r) {
    const bool responses = r.api == u"responses";
    const bool chat = r.api == u"chat_completions";
    if ((!responses && !chat) || r.method.toUpper() != u"POST" || !r.body.isObject())
        return pythonRequests(r, QCoreApplication::translate("CopyAsCommand",
                                                             "The openai SDK has no call for this "
                                                             "request; the same with requests:"));
    QString base = r.url;
    const qsizetype v1 = base.indexOf(u"/v1/"_s);
    if (v1 >= 0)
        base.truncate(v1 + 3);
    QString apiKey = u"\"unused\""_s;
    QList<CopyAsCommand::Header> extra;
    for (const CopyAsCommand::Header &h : r.headers) {
        const QString lower = h.name.toLower();
        if (lower == u"authorization") {
            apiKey = h.variable.isEmpty()
                         ? CopyAsCommand::pythonString(h.value.section(u' ', 1))
                         : u"os.environ["_s % CopyAsCommand::pythonString(h.variable) % u']';
            continue;
        }
        // The SDK sets these itself.
        if (lower == u"content-type" || lower == u"accept" || lower == u"user-agent" ||
            lower.startsWith(u"x-stainless"))
            continue;
        extra << h;
    }
    QString out = u"import os\n\nfrom openai import OpenAI\n\n"_s;
    out += u"client = OpenAI(base_url="_s % CopyAsCommand::pythonString(base) % u", api_key=" %
           apiKey % u")\n";
    out += u"body = "_s % CopyAsCommand::pythonLiteral(r.body) % u'\n';
    QString call = (responses ? u"client.responses.create(**body"_s
                              : u"client.chat.completions.create(**body"_s);
    if (!extra.isEmpty()) {
        call += u", extra_headers={"_s;
        QStringList items;
        for (const CopyAsCommand::Header &h : std::as_const(extra))
            items << CopyAsCommand::pythonString(h.name) % u": " % pythonHeaderValue(h);
        call += items.join(u", "_s) % u'}';
    }
    call += u')';
    if (r.body.toObject().value(u"stream"_s).toBool())
        out += u"for event in "_s % call % u":\n    print(event)\n";
    else
        out += u"response = "_s % call % u"\nprint(response)\n";
    return out;
}

QString nodeFetch(const CopyAsCommand::Request &r) {
    QString out = u"// Node 18+ (built-in fetch).\n(async () => {\n"_s;
    out += u"  const response = await fetch("_s % CopyAsCommand::jsString(r.url) % u", {\n";
    out += u"    method: "_s % CopyAsCommand::jsString(r.method.toUpper()) % u",\n";
    QList<CopyAsCommand::Header> headers = r.headers;
    if (hasJsonBody(r.body) && !hasHeader(r, u"content-type"_s))
        headers.append({u"content-type"_s, u"application/json"_s, {}, {}});
    if (!headers.isEmpty()) {
        out += u"    headers: {\n"_s;
        for (const CopyAsCommand::Header &h : std::as_const(headers))
            out +=
                u"      "_s % CopyAsCommand::jsString(h.name) % u": " % jsHeaderValue(h) % u",\n";
        out += u"    },\n"_s;
    }
    if (hasJsonBody(r.body))
        out += u"    body: JSON.stringify("_s % CopyAsCommand::jsLiteral(r.body, 4) % u"),\n";
    else if (hasBody(r.body))
        out += u"    body: "_s % CopyAsCommand::jsString(r.body.toString()) % u",\n";
    out += u"  });\n  console.log(response.status);\n  console.log(await response.text());\n"
           u"})();\n"_s;
    return out;
}

} // namespace

std::optional<CopyAsCommand::Request> CopyAsCommand::fromFlow(const QJsonObject &flow,
                                                              const QString &baseUrl) {
    QJsonObject hop;
    for (const QJsonValue &h : flow.value(u"hops"_s).toArray()) {
        if (h.toObject().value(u"kind"_s).toString() == u"client_request") {
            hop = h.toObject();
            break;
        }
    }
    if (hop.isEmpty())
        return std::nullopt;
    Request r;
    r.method = hop.value(u"method"_s).toString(flow.value(u"method"_s).toString(u"POST"_s));
    r.api = flow.value(u"api"_s).toString();
    r.body = hop.value(u"body"_s);
    const QJsonObject headers = hop.value(u"headers"_s).toObject();

    QString origin = baseUrl;
    if (origin.isEmpty()) {
        const QString host = headers.value(u"host"_s).toString();
        origin = host.isEmpty() ? u"http://127.0.0.1:4000"_s : u"http://"_s % host;
    }
    while (origin.endsWith(u'/'))
        origin.chop(1);
    QString path = hop.value(u"path"_s).toString(flow.value(u"path"_s).toString());
    if (origin.endsWith(u"/v1") && path.startsWith(u"/v1/"))
        origin.chop(3);
    const QString query = hop.value(u"query"_s).toString();
    r.url = origin % path % (query.isEmpty() || path.contains(u'?') ? QString() : u'?' % query);

    static const QRegularExpression schemeThenMask(u"^(\\S+\\s+)\\x{2026}"_s);
    for (auto it = headers.constBegin(); it != headers.constEnd(); ++it) {
        const QString name = it.key();
        const QString lower = name.toLower();
        if (isTransportHeader(lower))
            continue;
        Header h{name, it.value().toString(), {}, {}};
        if (h.value.contains(kMaskMark) || CredentialPolicy::isSecretHeader(lower.toUtf8())) {
            h.variable = envNameFor(lower);
            const QRegularExpressionMatch m = schemeThenMask.match(h.value);
            if (m.hasMatch())
                h.variablePrefix = m.captured(1);
            h.value.clear();
        }
        r.headers.append(h);
    }
    return r;
}

QString CopyAsCommand::generate(Format format, const Request &request) {
    switch (format) {
    case Format::Curl:
        return curl(request);
    case Format::PythonRequests:
        return pythonRequests(request);
    case Format::PythonOpenAi:
        return pythonOpenAi(request);
    case Format::NodeFetch:
        return nodeFetch(request);
    }
    return {};
}

QString CopyAsCommand::forFlow(const QJsonObject &flow, Format format, const QString &baseUrl) {
    const std::optional<Request> request = fromFlow(flow, baseUrl);
    return request ? generate(format, *request) : QString();
}

QString CopyAsCommand::formatName(Format format) {
    switch (format) {
    case Format::Curl:
        return QCoreApplication::translate("CopyAsCommand", "curl");
    case Format::PythonRequests:
        return QCoreApplication::translate("CopyAsCommand", "Python (requests)");
    case Format::PythonOpenAi:
        return QCoreApplication::translate("CopyAsCommand", "Python (openai SDK)");
    case Format::NodeFetch:
        return QCoreApplication::translate("CopyAsCommand", "Node (fetch)");
    }
    return {};
}

QString CopyAsCommand::shellQuote(const QString &text) {
    QString out = text;
    out.replace(u"'"_s, u"'\\''"_s);
    return u'\'' % out % u'\'';
}

QString CopyAsCommand::pythonString(const QString &text) {
    QString out = u"\""_s;
    for (const QChar c : text) {
        switch (c.unicode()) {
        case '\\':
            out += u"\\\\";
            break;
        case '"':
            out += u"\\\"";
            break;
        case '\n':
            out += u"\\n";
            break;
        case '\r':
            out += u"\\r";
            break;
        case '\t':
            out += u"\\t";
            break;
        default:
            if (c.unicode() < 0x20 || c.unicode() == 0x7f)
                out += u"\\x"_s % QString::number(c.unicode(), 16).rightJustified(2, u'0');
            else
                out += c;
        }
    }
    return out % u'"';
}

QString CopyAsCommand::jsString(const QString &text) {
    // A JSON string literal is a JS string literal; U+2028/2029 escaped for older engines.
    QString out = QString::fromUtf8(QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact));
    out = out.mid(1, out.size() - 2);
    out.replace(QChar(0x2028), u"\\u2028"_s);
    out.replace(QChar(0x2029), u"\\u2029"_s);
    return out;
}

QString CopyAsCommand::pythonLiteral(const QJsonValue &value, int indent) {
    return literal(value, indent, 4, Dialect::Python);
}

QString CopyAsCommand::jsLiteral(const QJsonValue &value, int indent) {
    return literal(value, indent, 2, Dialect::Js);
}

QByteArray CopyAsCommand::bodyBytes(const QJsonValue &body) {
    if (body.isObject())
        return QJsonDocument(body.toObject()).toJson(QJsonDocument::Compact);
    if (body.isArray())
        return QJsonDocument(body.toArray()).toJson(QJsonDocument::Compact);
    if (body.isString())
        return body.toString().toUtf8();
    return {};
}

} // namespace loopscope
