#include "models/exchangemodel.h"

#include "inspect/textformat.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QUrl>

namespace loopscope {

using namespace Qt::StringLiterals;

namespace {

QString iterationText(const QJsonObject &hop) {
    return QString::number(hop.value(u"iteration"_s).toInt() + 1);
}

} // namespace

ExchangeModel::ExchangeModel(QObject *parent)
    : QAbstractListModel(parent) {}

void ExchangeModel::setFlow(const QJsonObject &flow) {
    const QJsonArray hops = flow.value(u"hops"_s).toArray();
    const bool sameFlow = !m_flow.isEmpty() && flow.value(u"id"_s) == m_flow.value(u"id"_s);
    m_flow = flow;
    if (!sameFlow || hops.size() < m_hops.size()) {
        beginResetModel();
        m_hops = hops;
        endResetModel();
        return;
    }
    // A live update of the same flow only appends hops or changes the last ones.
    const qsizetype old = m_hops.size();
    for (qsizetype i = 0; i < old; ++i) {
        if (m_hops.at(i) != hops.at(i)) {
            m_hops[i] = hops.at(i);
            emit dataChanged(index(int(i)), index(int(i)));
        }
    }
    if (hops.size() > old) {
        beginInsertRows({}, int(old), int(hops.size() - 1));
        for (qsizetype i = old; i < hops.size(); ++i)
            m_hops.append(hops.at(i));
        endInsertRows();
    }
}

QJsonObject ExchangeModel::hop(int row) const {
    return row >= 0 && row < m_hops.size() ? m_hops.at(row).toObject() : QJsonObject();
}

int ExchangeModel::rowOf(const QString &kind) const {
    for (qsizetype i = 0; i < m_hops.size(); ++i)
        if (m_hops.at(i).toObject().value(u"kind"_s).toString() == kind)
            return int(i);
    return -1;
}

int ExchangeModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_hops.size());
}

QVariant ExchangeModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject h = m_hops.at(index.row()).toObject();
    switch (role) {
    case Qt::DisplayRole:
        return flowTitle(h);
    case Qt::ToolTipRole: // the full row, however narrow the list
        return QString(flowTitle(h) % u'\n' % statusLine(h, m_flow));
    case HopRole:
        return h;
    case KindRole:
        return h.value(u"kind"_s).toString();
    case IterationRole:
        return h.value(u"iteration"_s).toInt(-1);
    default:
        return {};
    }
}

QString ExchangeModel::reasonPhrase(int status) {
    switch (status) {
    case 200:
        return u"OK"_s;
    case 201:
        return u"Created"_s;
    case 204:
        return u"No Content"_s;
    case 400:
        return u"Bad Request"_s;
    case 401:
        return u"Unauthorized"_s;
    case 403:
        return u"Forbidden"_s;
    case 404:
        return u"Not Found"_s;
    case 405:
        return u"Method Not Allowed"_s;
    case 408:
        return u"Request Timeout"_s;
    case 409:
        return u"Conflict"_s;
    case 413:
        return u"Payload Too Large"_s;
    case 415:
        return u"Unsupported Media Type"_s;
    case 422:
        return u"Unprocessable Entity"_s;
    case 429:
        return u"Too Many Requests"_s;
    case 499:
        return u"Client Closed Request"_s;
    case 500:
        return u"Internal Server Error"_s;
    case 502:
        return u"Bad Gateway"_s;
    case 503:
        return u"Service Unavailable"_s;
    case 504:
        return u"Gateway Timeout"_s;
    default:
        return {};
    }
}

QString ExchangeModel::duration(double ms) {
    return textformat::formatDuration(ms);
}

QString ExchangeModel::dialectLabel(const QString &dialect) {
    if (dialect == u"responses")
        return tr("Responses");
    if (dialect == u"chat_completions")
        return tr("Chat Completions");
    if (dialect == u"messages")
        return tr("Messages");
    return {};
}

QString ExchangeModel::flowTitle(const QJsonObject &hop) const {
    // A bridged flow says so on its client request: the upstream hops below it are in
    // another dialect than the client's.
    if (hop.value(u"kind"_s).toString() == u"client_request" && m_flow.value(u"bridged"_s).toBool())
        return title(hop) % u" · " % tr("bridged");
    return title(hop);
}

QString ExchangeModel::title(const QJsonObject &hop) {
    const QString kind = hop.value(u"kind"_s).toString();
    const int status = hop.value(u"status"_s).toInt();
    const QString statusText =
        status > 0 ? QString(QString::number(status) % u' ' % reasonPhrase(status)).trimmed()
                   : tr("no response");
    if (kind == u"client_request")
        return tr("Client request") % u" · " % hop.value(u"method"_s).toString() % u' ' %
               hop.value(u"path"_s).toString();
    if (kind == u"upstream_request") {
        QString t = tr("Upstream request %1").arg(iterationText(hop));
        if (const QString d = dialectLabel(hop.value(u"dialect"_s).toString()); !d.isEmpty())
            t += u" · " % d;
        return t;
    }
    if (kind == u"upstream_response") {
        QString t = tr("Upstream response %1").arg(iterationText(hop)) % u" · " % statusText;
        if (hop.contains(u"latency_ms"_s))
            t += u" · " % duration(hop.value(u"latency_ms"_s).toDouble());
        return t;
    }
    if (kind == u"code_run") {
        QString t = tr("Code run (iteration %1)").arg(iterationText(hop));
        if (!hop.value(u"error"_s).isNull() && !hop.value(u"error"_s).isUndefined())
            t += u" · " % tr("error");
        else if (hop.value(u"timed_out"_s).toBool())
            t += u" · " % tr("timed out");
        return t;
    }
    if (kind == u"client_response")
        return tr("Client response") % u" · " % statusText;
    return kind;
}

QString ExchangeModel::statusLine(const QJsonObject &hop, const QJsonObject &flow) {
    const QString kind = hop.value(u"kind"_s).toString();
    if (kind == u"client_request") {
        QString target = hop.value(u"path"_s).toString();
        const QString query = hop.value(u"query"_s).toString();
        if (!query.isEmpty() && !target.contains(u'?'))
            target += u'?' % query;
        return hop.value(u"method"_s).toString(flow.value(u"method"_s).toString()) % u' ' % target %
               u" HTTP/1.1";
    }
    if (kind == u"upstream_request")
        return hop.value(u"method"_s).toString(u"POST"_s) % u' ' % hop.value(u"url"_s).toString() %
               u" HTTP/1.1";
    if (kind == u"upstream_response" || kind == u"client_response") {
        const int status = hop.value(u"status"_s).toInt();
        if (status <= 0) {
            const QString error = hop.value(u"error"_s).toString();
            return error.isEmpty() ? tr("No response") : tr("No response: %1").arg(error);
        }
        return QString(u"HTTP/1.1 "_s % QString::number(status) % u' ' % reasonPhrase(status))
            .trimmed();
    }
    if (kind == u"code_run") {
        QString line = tr("Code run") % u" · " % hop.value(u"call_id"_s).toString();
        if (const QString c = hop.value(u"container_id"_s).toString(); !c.isEmpty())
            line += u" · " % c;
        return line;
    }
    return kind;
}

QList<QPair<QString, QString>> ExchangeModel::headers(const QJsonObject &hop) {
    QList<QPair<QString, QString>> rows;
    const QJsonObject headers = hop.value(u"headers"_s).toObject();
    for (auto it = headers.constBegin(); it != headers.constEnd(); ++it)
        rows.append({it.key(), it.value().isString() ? it.value().toString()
                                                     : textformat::prettyJson(it.value())});
    return rows;
}

QList<QPair<QString, QString>> ExchangeModel::timings(const QJsonObject &hop,
                                                      const QJsonObject &flow) {
    QList<QPair<QString, QString>> rows;
    const QString kind = hop.value(u"kind"_s).toString();
    if (kind == u"upstream_response" && hop.contains(u"latency_ms"_s))
        rows.append({tr("Upstream latency"), duration(hop.value(u"latency_ms"_s).toDouble())});
    if (kind == u"code_run")
        rows.append({tr("Run time"), duration(hop.value(u"duration_ms"_s).toDouble())});
    const double startedAt = flow.value(u"started_at"_s).toDouble();
    if (hop.contains(u"at"_s) && startedAt > 0)
        rows.append({tr("At"), u"+"_s % duration(hop.value(u"at"_s).toDouble() - startedAt)});
    if (kind == u"upstream_response") {
        const QJsonObject usage = hop.value(u"usage"_s).toObject();
        if (!usage.isEmpty())
            rows.append({tr("Tokens"), tr("%1 in · %2 out")
                                           .arg(usage.value(u"input_tokens"_s).toInteger())
                                           .arg(usage.value(u"output_tokens"_s).toInteger())});
    }
    if (!flow.isEmpty()) {
        const QString state = flow.value(u"state"_s).toString();
        const bool running = state == u"running" || state == u"paused";
        rows.append({tr("Flow total"),
                     running ? tr("running…") : duration(flow.value(u"duration_ms"_s).toDouble())});
        rows.append({tr("Time to first byte"), duration(flow.value(u"ttfb_ms"_s).toDouble())});
        rows.append({tr("Loopscope overhead"), duration(flow.value(u"overhead_ms"_s).toDouble())});
    }
    return rows;
}

QString ExchangeModel::bodyText(const QJsonObject &hop) {
    const QString kind = hop.value(u"kind"_s).toString();
    if (kind == u"code_run") {
        QString out = u"# code\n"_s % hop.value(u"code"_s).toString();
        for (const char *key : {"stdout", "stderr"}) {
            const QString text = hop.value(QLatin1String(key)).toString();
            if (!text.isEmpty())
                out += u"\n\n# "_s % QLatin1String(key) % u'\n' % text;
        }
        const QJsonValue error = hop.value(u"error"_s);
        if (!error.isNull() && !error.isUndefined())
            out += u"\n\n# error\n"_s % (error.isObject()
                                             ? error.toObject()
                                                   .value(u"traceback"_s)
                                                   .toString(textformat::prettyJson(error))
                                             : textformat::prettyJson(error));
        if (!hop.value(u"output"_s).isNull())
            out +=
                u"\n\n# fed back to the model\n"_s % textformat::prettyJson(hop.value(u"output"_s));
        return out;
    }
    const QJsonValue body = hop.value(u"body"_s);
    const QString text = textformat::prettyJson(body);
    if (!text.isEmpty())
        return text;
    const qsizetype n = events(hop).size();
    if (n > 0)
        return n == 1 ? tr("(streamed: 1 event, see Events)")
                      : tr("(streamed: %1 events, see Events)").arg(n);
    if (const QString error = hop.value(u"error"_s).toString(); !error.isEmpty())
        return tr("(no body: %1)").arg(error);
    return tr("(no body)");
}

} // namespace loopscope
