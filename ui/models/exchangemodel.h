#pragma once

#include <QAbstractListModel>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>

namespace loopscope {

// The hops of one flow (FlowQuery::flow JSON: summary + "hops") as a list, in wire order:
// client request, each upstream request/response with its iteration, code runs, client
// response. Works for every flow the store holds: intercepted, pass-through, rejected (a 401
// has just a client request and a client response). Header values are shown exactly as the
// store masked them; nothing here unmasks. Qt Core only.
class ExchangeModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role { HopRole = Qt::UserRole + 1, KindRole, IterationRole };

    explicit ExchangeModel(QObject *parent = nullptr);

    // An empty object clears. The same flow again (a live update) keeps rows that did not change
    // so a view's selection stays put.
    void setFlow(const QJsonObject &flow);
    const QJsonObject &flow() const { return m_flow; }
    QJsonObject hop(int row) const;
    // The row of the first hop of `kind`, -1 when there is none.
    int rowOf(const QString &kind) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;

    // Presentation, shared with the inspector widget and its tests.
    static QString title(const QJsonObject &hop); // "Upstream response 2 · 200 OK · 1.2 s"
    // "Responses", "Chat Completions", "Messages" for a hop's `dialect` ("" when unknown).
    static QString dialectLabel(const QString &dialect);
    // "POST /v1/responses HTTP/1.1", "HTTP/1.1 200 OK", "POST http://…/v1/responses HTTP/1.1",
    // "Code run · call_1 · cntr_…"; upstream hops of intercepted flows are reconstructed.
    static QString statusLine(const QJsonObject &hop, const QJsonObject &flow = {});
    static QString reasonPhrase(int status);
    // Header rows in store order, values as stored (masked).
    static QList<QPair<QString, QString>> headers(const QJsonObject &hop);
    // Label/value rows: the flow's total, TTFB and overhead, the hop's own latency or duration,
    // when it happened relative to the flow's start.
    static QList<QPair<QString, QString>> timings(const QJsonObject &hop, const QJsonObject &flow);
    // Pretty JSON, text as is, or a note for "no body"/"streamed".
    static QString bodyText(const QJsonObject &hop);
    // The hop's SSE events (present when that side streamed).
    static QJsonArray events(const QJsonObject &hop) {
        return hop.value(QStringLiteral("events")).toArray();
    }
    // textformat::formatDuration, the app's one format.
    static QString duration(double ms);

private:
    // title() plus what the flow adds: " · bridged" on a bridged flow's client request.
    QString flowTitle(const QJsonObject &hop) const;
    QJsonObject m_flow;
    QJsonArray m_hops;
};

} // namespace loopscope
