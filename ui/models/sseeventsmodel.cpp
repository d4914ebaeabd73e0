#include "models/sseeventsmodel.h"

#include "models/exchangemodel.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>

namespace loopscope {

using namespace Qt::StringLiterals;

namespace {
constexpr qsizetype kCellChars = 300; // one table line; the full data is in DecodedRole
}

SseEventsModel::SseEventsModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void SseEventsModel::setEvents(const QJsonArray &events, double originMs) {
    beginResetModel();
    m_events = events;
    m_originMs = originMs;
    endResetModel();
}

QString SseEventsModel::decoded(const QJsonValue &data) {
    if (data.isObject())
        return QString::fromUtf8(QJsonDocument(data.toObject()).toJson(QJsonDocument::Indented))
            .trimmed();
    if (data.isArray())
        return QString::fromUtf8(QJsonDocument(data.toArray()).toJson(QJsonDocument::Indented))
            .trimmed();
    if (data.isDouble())
        return QString::number(data.toDouble(), 'g', 17);
    if (data.isBool())
        return data.toBool() ? u"true"_s : u"false"_s;
    return data.toString();
}

int SseEventsModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_events.size());
}

int SseEventsModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SseEventsModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject event = m_events.at(index.row()).toObject();
    if (role == DecodedRole)
        return decoded(event.value(u"data"_s));
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case IndexColumn:
        return index.row() + 1;
    case TimeColumn:
        if (!event.contains(u"at"_s))
            return QString();
        return QString(u"+"_s %
                       ExchangeModel::duration(event.value(u"at"_s).toDouble() - m_originMs));
    case EventColumn:
        return event.value(u"event"_s).toString(u"message"_s);
    case DataColumn: {
        const QJsonValue data = event.value(u"data"_s);
        QString line =
            data.isObject()
                ? QString::fromUtf8(QJsonDocument(data.toObject()).toJson(QJsonDocument::Compact))
            : data.isArray()
                ? QString::fromUtf8(QJsonDocument(data.toArray()).toJson(QJsonDocument::Compact))
                : decoded(data);
        line.replace(u'\n', u' ');
        if (line.size() > kCellChars)
            line = QString(line.left(kCellChars) % QChar(0x2026));
        return line;
    }
    default:
        return {};
    }
}

QVariant SseEventsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IndexColumn:
        return u"#"_s;
    case TimeColumn:
        return QCoreApplication::translate("SseEventsModel", "Time");
    case EventColumn:
        return QCoreApplication::translate("SseEventsModel", "Event");
    case DataColumn:
        return QCoreApplication::translate("SseEventsModel", "Data");
    default:
        return {};
    }
}

} // namespace loopscope
