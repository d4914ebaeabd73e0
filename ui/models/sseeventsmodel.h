#pragma once

#include <QAbstractTableModel>
#include <QJsonArray>

namespace loopscope {

// One streamed side's SSE events (a hop's "events": {"event", "data", optional "at"}) as a
// table: #, time (relative to `originMs` when the event carries "at"), event name, data on one
// line. DecodedRole gives the data decoded for reading (pretty JSON or the text). Qt Core only.
class SseEventsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { IndexColumn, TimeColumn, EventColumn, DataColumn, ColumnCount };
    enum Role { DecodedRole = Qt::UserRole + 1 };

    explicit SseEventsModel(QObject *parent = nullptr);

    void setEvents(const QJsonArray &events, double originMs = 0);
    const QJsonArray &events() const { return m_events; }
    static QString decoded(const QJsonValue &data);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QJsonArray m_events;
    double m_originMs = 0;
};

} // namespace loopscope
