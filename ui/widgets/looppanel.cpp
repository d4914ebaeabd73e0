#include "widgets/looppanel.h"

#include "inspect/credentialpolicy.h"
#include "inspect/textformat.h"
#include "models/looptimelinemodel.h"
#include "widgets/timelinebardelegate.h"

#include <QCheckBox>
#include <QDateTime>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace loopscope {

namespace {

// Often enough for a tenth-of-a-second display to look alive, rarely enough to cost nothing.
constexpr int kTickMs = 200;

QString pretty(const QJsonValue &value) {
    if (value.isObject())
        return QString::fromUtf8(
            QJsonDocument(CredentialPolicy::formatsOnly().maskObject(value.toObject()))
                .toJson(QJsonDocument::Indented));
    if (value.isArray())
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Indented));
    return value.toVariant().toString();
}

} // namespace

LoopPanel::LoopPanel(QWidget *parent)
    : QWidget(parent)
    , m_model(new LoopTimelineModel(this))
    , m_view(new QTableView(this))
    , m_summary(new QLabel(this))
    , m_follow(new QCheckBox(tr("Follow"), this))
    , m_details(new QPlainTextEdit(this))
    , m_ticker(new QTimer(this)) {
    build();
}

void LoopPanel::build() {
    m_view->setModel(m_model);
    m_view->setItemDelegateForColumn(LoopTimelineModel::TimelineColumn,
                                     new TimelineBarDelegate(m_view));
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setColumnWidth(LoopTimelineModel::StepColumn, 120);
    m_view->setColumnWidth(LoopTimelineModel::StartColumn, 80);
    m_view->setColumnWidth(LoopTimelineModel::DurationColumn, 110);
    m_details->setReadOnly(true);
    m_details->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_details->setPlaceholderText(tr("Select a step to see its details."));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_follow->setChecked(true);
    m_follow->setToolTip(tr("Keep the newest running step selected and in view"));
    m_ticker->setInterval(kTickMs);

    connect(m_ticker, &QTimer::timeout, this,
            [this] { m_model->tick(QDateTime::currentMSecsSinceEpoch()); });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                // A step the user picks stops following; Follow's own picks do not.
                if (!m_programmatic && current.isValid() &&
                    current.row() != m_model->newestRunningRow())
                    m_follow->setChecked(false);
                showDetails(current.row());
            });
    connect(m_follow, &QCheckBox::toggled, this, [this](bool on) {
        if (on)
            followNewest();
    });
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &LoopPanel::afterChange);
    connect(m_model, &QAbstractItemModel::modelReset, this, &LoopPanel::afterChange);
    connect(m_model, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex &from, const QModelIndex &to) {
                // A finished step's details show its answer; the tick alone changes nothing.
                if (m_detailsRow >= from.row() && m_detailsRow <= to.row() && from.column() == 0)
                    showDetails(m_detailsRow);
                if (from.column() == 0)
                    afterChange();
            });

    auto *top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_summary, 1);
    top->addWidget(m_follow);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_view);
    splitter->addWidget(m_details);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);
    updateSummary();
}

bool LoopPanel::follows() const {
    return m_follow->isChecked();
}

void LoopPanel::setFollow(bool on) {
    m_follow->setChecked(on);
}

void LoopPanel::setFlow(const QJsonObject &flow) {
    const bool other = flow.value(QStringLiteral("id")).toString() != m_model->flowId();
    if (other) {
        m_details->clear();
        m_detailsRow = -1;
    }
    m_model->setFlow(flow);
    afterChange();
}

void LoopPanel::applyLiveEvents(const QList<InspectorEvent> &events) {
    m_model->applyLiveEvents(events);
    afterChange();
}

void LoopPanel::afterChange() {
    // One timer for the panel, and only while something runs.
    if (m_model->hasRunningSteps()) {
        if (!m_ticker->isActive()) {
            m_model->tick(QDateTime::currentMSecsSinceEpoch());
            m_ticker->start();
        }
    } else if (m_ticker->isActive()) {
        m_ticker->stop();
        m_model->tick(QDateTime::currentMSecsSinceEpoch());
    }
    if (m_follow->isChecked())
        followNewest();
    updateSummary();
}

void LoopPanel::followNewest() {
    int row = m_model->newestRunningRow();
    if (row < 0)
        row = m_model->rowCount() - 1;
    if (row < 0 || m_view->currentIndex().row() == row)
        return;
    m_programmatic = true;
    selectStep(row);
    m_programmatic = false;
    m_view->scrollTo(m_model->index(row, 0));
}

void LoopPanel::updateSummary() {
    if (m_model->flowId().isEmpty()) {
        m_summary->setText(tr("No request selected"));
        return;
    }
    QString text = textformat::plural(m_model->rowCount(), tr("step"));
    if (m_model->hasRunningSteps())
        text += tr(" · running");
    m_summary->setText(text);
}

void LoopPanel::selectStep(int row) {
    const QModelIndex index = m_model->index(row, 0);
    if (!index.isValid())
        return;
    const bool was = m_programmatic;
    m_programmatic = true;
    m_view->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
    m_programmatic = was;
}

void LoopPanel::showDetails(int row) {
    m_detailsRow = row;
    const QModelIndex index = m_model->index(row, 0);
    if (!index.isValid()) {
        m_details->clear();
        return;
    }
    const bool running = index.data(LoopTimelineModel::RunningRole).toBool();
    const int iteration = index.data(LoopTimelineModel::IterationRole).toInt();
    const QString label = index.data().toString();
    if (index.data(LoopTimelineModel::KindRole).toInt() ==
        int(LoopTimelineModel::StepKind::UpstreamCall)) {
        const QJsonObject response = m_model->responseHopAt(row);
        QString text;
        if (running || response.isEmpty()) {
            text = tr("%1 (iteration %2): waiting for the model\n\nSent:\n")
                       .arg(label)
                       .arg(iteration + 1);
            text += pretty(m_model->requestHopAt(row).value(QStringLiteral("body")));
        } else {
            const QJsonObject usage = response.value(QStringLiteral("usage")).toObject();
            text = tr("%1 (iteration %2): HTTP %3 in %4\n")
                       .arg(label)
                       .arg(iteration + 1)
                       .arg(response.value(QStringLiteral("status")).toInt())
                       .arg(LoopTimelineModel::formatDuration(
                           response.value(QStringLiteral("latency_ms")).toDouble()));
            text += tr("Tokens: %1 in, %2 out, %3 total\n")
                        .arg(usage.value(QStringLiteral("input_tokens")).toInteger())
                        .arg(usage.value(QStringLiteral("output_tokens")).toInteger())
                        .arg(usage.value(QStringLiteral("total_tokens")).toInteger());
            if (const QString error = response.value(QStringLiteral("error")).toString();
                !error.isEmpty())
                text += tr("Error: %1\n").arg(error);
            text += u'\n' + pretty(response.value(QStringLiteral("body")));
        }
        m_details->setPlainText(text);
        emit stepSelected(QStringLiteral("model_call"), iteration, {});
        return;
    }
    const QJsonObject hop = m_model->codeRunHopAt(row);
    const QString callId = index.data(LoopTimelineModel::CallIdRole).toString();
    QString text =
        tr("%1 (iteration %2) %3 on %4: %5\n")
            .arg(label)
            .arg(iteration + 1)
            .arg(callId, hop.value(QStringLiteral("container_id")).toString(),
                 running
                     ? tr("running")
                     : m_model->index(row, LoopTimelineModel::DurationColumn).data().toString());
    const QJsonObject error = hop.value(QStringLiteral("error")).toObject();
    if (!error.isEmpty())
        text += tr("Error: %1: %2\n")
                    .arg(error.value(QStringLiteral("name")).toString(),
                         error.value(QStringLiteral("value")).toString());
    if (!running)
        text += tr("Fed back to the model:\n") + hop.value(QStringLiteral("output")).toString();
    m_details->setPlainText(text);
    emit stepSelected(QStringLiteral("code_run"), iteration, callId);
    emit codeStepSelected(callId);
}

} // namespace loopscope
