#pragma once

#include "record/modelprice.h"

#include <QHash>
#include <QJsonObject>
#include <QString>
#include <QStringView>

#include <optional>

namespace loopscope {

// Prices that work out of the box: widely used OpenAI and Anthropic models, shipped as data
// (resources/model-prices.json, with its source and date) so a flow without model_info still
// shows a cost. A configured model's model_info wins over it (FlowRecorder).
class ModelPriceTable {
public:
    // The table shipped in the binary.
    static const ModelPriceTable &builtIn();
    // {"source", "as_of", "models": {name: {"input", "output", "cache_read", "cache_write"}}},
    // prices in USD per million tokens as the vendors publish them. Rows without a numeric
    // input and output are left out.
    static ModelPriceTable fromJson(const QJsonObject &table);

    // The price of `model` as a client or an upstream names it: a provider prefix
    // ("anthropic/", "openai/") dropped, then the row of that exact name, else of the longest
    // name it extends by a dated snapshot ("-2024-08-06", "-20250929") or "-latest".
    std::optional<ModelPrice> find(QStringView model) const;

    QString source() const { return m_source; }
    QString asOf() const { return m_asOf; }
    qsizetype size() const { return m_prices.size(); }

private:
    QHash<QString, ModelPrice> m_prices;
    QString m_source;
    QString m_asOf;
};

} // namespace loopscope
