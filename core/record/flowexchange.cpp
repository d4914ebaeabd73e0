#include "record/flowexchange.h"

#include "record/sharedjsonparser.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace loopscope {

namespace {

const QString kKind = QStringLiteral("kind");

// The hop's kind as written (hops are objects written by Qt: keys plain, values short).
QByteArrayView kindOf(const QList<SharedJsonParser::Member> &members) {
    for (const SharedJsonParser::Member &m : members)
        if (m.key == "kind") {
            const QByteArrayView v = m.value;
            return v.size() >= 2 ? v.sliced(1, v.size() - 2) : QByteArrayView();
        }
    return {};
}

// `parser` null: nothing of this hop repeats elsewhere (an answer).
QJsonObject hopObject(const QList<SharedJsonParser::Member> &members, SharedJsonParser *parser) {
    QJsonObject hop;
    for (const SharedJsonParser::Member &m : members)
        hop.insert(SharedJsonParser::keyText(m.key),
                   parser ? parser->parse(m.value) : SharedJsonParser::parseOnce(m.value));
    return hop;
}

} // namespace

QString FlowExchange::id() const {
    return summary.value(QStringLiteral("id")).toString();
}

FlowExchange FlowExchange::fromFlow(const QJsonObject &flow) {
    FlowExchange x;
    x.summary = flow;
    x.summary.remove(QStringLiteral("hops"));
    QJsonObject upstreamAnswer;
    for (const QJsonValue &v : flow.value(QStringLiteral("hops")).toArray()) {
        const QJsonObject hop = v.toObject();
        const QString kind = hop.value(kKind).toString();
        if (kind == QLatin1String("client_request") && x.request.isEmpty())
            x.request = hop;
        else if (kind == QLatin1String("client_response"))
            x.answer = hop;
        else if (kind == QLatin1String("upstream_response"))
            upstreamAnswer = hop;
    }
    if (x.answer.isEmpty())
        x.answer = upstreamAnswer;
    return x;
}

FlowExchange FlowExchange::fromStored(QByteArrayView summary, QByteArrayView hops,
                                      SharedJsonParser &parser) {
    FlowExchange x;
    x.summary =
        QJsonDocument::fromJson(QByteArray::fromRawData(summary.data(), summary.size())).object();
    QList<QList<SharedJsonParser::Member>> all = SharedJsonParser::objects(hops);
    if (all.isEmpty() && !hops.trimmed().isEmpty()) { // not what the store writes: parse it all
        QJsonObject flow = x.summary;
        flow.insert(QStringLiteral("hops"), parser.parse(hops));
        return fromFlow(flow);
    }
    QList<SharedJsonParser::Member> request, answer, upstreamAnswer;
    for (QList<SharedJsonParser::Member> &members : all) {
        const QByteArrayView kind = kindOf(members);
        if (kind == "client_request" && request.isEmpty())
            request = std::move(members);
        else if (kind == "client_response")
            answer = std::move(members);
        else if (kind == "upstream_response")
            upstreamAnswer = std::move(members);
    }
    x.request = hopObject(request, &parser);
    x.answer = hopObject(answer.isEmpty() ? upstreamAnswer : answer, nullptr);
    return x;
}

} // namespace loopscope
