#include "record/modelpricetable.h"

#include <QFile>
#include <QJsonDocument>
#include <QRegularExpression>

namespace loopscope {

namespace {

constexpr double kPerMillion = 1e-6;

double perToken(const QJsonObject &row, const char *key) {
    const QJsonValue v = row.value(QLatin1String(key));
    return v.isDouble() ? v.toDouble() * kPerMillion : -1;
}

ModelPriceTable loadBuiltIn() {
    QFile file(QStringLiteral(":/loopscope/model-prices.json"));
    if (!file.open(QIODevice::ReadOnly)) {
        qWarning("the built-in model price table is missing from the binary");
        return {};
    }
    return ModelPriceTable::fromJson(QJsonDocument::fromJson(file.readAll()).object());
}

} // namespace

const ModelPriceTable &ModelPriceTable::builtIn() {
    static const ModelPriceTable table = loadBuiltIn();
    return table;
}

ModelPriceTable ModelPriceTable::fromJson(const QJsonObject &table) {
    ModelPriceTable t;
    t.m_source = table.value(QStringLiteral("source")).toString();
    t.m_asOf = table.value(QStringLiteral("as_of")).toString();
    const QJsonObject models = table.value(QStringLiteral("models")).toObject();
    for (auto it = models.constBegin(); it != models.constEnd(); ++it) {
        const QJsonObject row = it.value().toObject();
        ModelPrice price;
        price.inputPerToken = perToken(row, "input");
        price.outputPerToken = perToken(row, "output");
        if (price.inputPerToken < 0 || price.outputPerToken < 0)
            continue;
        price.cacheReadPerToken = perToken(row, "cache_read");
        price.cacheWritePerToken = perToken(row, "cache_write");
        t.m_prices.insert(it.key().toLower(), price);
    }
    return t;
}

std::optional<ModelPrice> ModelPriceTable::find(QStringView model) const {
    static const QRegularExpression snapshot(
        QStringLiteral("^-(\\d{4}-\\d{2}-\\d{2}|\\d{8}|latest)$"));
    QString name = model.toString().toLower();
    if (const qsizetype slash = name.lastIndexOf(u'/'); slash >= 0)
        name = name.mid(slash + 1);
    if (const auto exact = m_prices.constFind(name); exact != m_prices.constEnd())
        return *exact;
    const ModelPrice *best = nullptr;
    qsizetype bestLength = 0;
    for (auto it = m_prices.constBegin(); it != m_prices.constEnd(); ++it) {
        const QString &key = it.key();
        if (key.size() > bestLength && name.startsWith(key) &&
            snapshot.match(QStringView(name).mid(key.size())).hasMatch()) {
            best = &it.value();
            bestLength = key.size();
        }
    }
    if (best)
        return *best;
    return std::nullopt;
}

} // namespace loopscope
