#include "widgets/sandboxespanel.h"

#include "models/sandboxcommands.h"
#include "models/sandboxesmodel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace loopscope {

SandboxesPanel::SandboxesPanel(SandboxesModel *model, SandboxCommands *commands, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
    , m_commands(commands)
    , m_view(new QTableView(this))
    , m_delete(new QPushButton(tr("Delete"), this))
    , m_deleteAll(new QPushButton(tr("Delete all"), this))
    , m_note(new QLabel(this))
    , m_tick(new QTimer(this)) {
    m_confirm = [this](const QString &question) {
        return QMessageBox::question(this, tr("Delete sandbox"), question,
                                     QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    m_view->setModel(model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setAlternatingRowColors(true);
    // Few rows, so sizing to contents is cheap; long container ids are elided in the middle
    // (their tool tip and the Code panel show them whole).
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(SandboxesModel::ContainerColumn,
                                                     QHeaderView::Interactive);
    m_view->setColumnWidth(SandboxesModel::ContainerColumn,
                           m_view->fontMetrics().horizontalAdvance(u'0') * 18);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_delete->setToolTip(tr("Delete the selected sandbox (Delete). The client's next request in "
                            "that session gets a fresh one."));
    m_deleteAll->setToolTip(tr("Delete every sandbox"));
    m_note->setWordWrap(true);
    if (commands)
        connect(commands, &SandboxCommands::availabilityChanged, this,
                &SandboxesPanel::updateButtons);

    connect(m_delete, &QPushButton::clicked, this, &SandboxesPanel::deleteSelected);
    connect(m_deleteAll, &QPushButton::clicked, this, &SandboxesPanel::deleteAll);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &SandboxesPanel::updateButtons);
    connect(model, &QAbstractItemModel::rowsInserted, this, &SandboxesPanel::updateButtons);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &SandboxesPanel::updateButtons);
    connect(model, &QAbstractItemModel::modelReset, this, &SandboxesPanel::updateButtons);
    // "Expires in" counts down without events.
    m_tick->setInterval(1000);
    connect(m_tick, &QTimer::timeout, model, &SandboxesModel::refreshExpiry);
    m_tick->start();

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_note, 1);
    buttons->addWidget(m_delete);
    buttons->addWidget(m_deleteAll);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_view, 1);
    layout->addLayout(buttons);
    updateButtons();
}

QString SandboxesPanel::selectedContainerId() const {
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    return rows.isEmpty() ? QString()
                          : rows.first().data(SandboxesModel::ContainerIdRole).toString();
}

bool SandboxesPanel::deleteSelected() {
    const QString id = selectedContainerId();
    if (id.isEmpty() || !m_commands || !m_commands->isAvailable())
        return false;
    if (!m_confirm(tr("Delete sandbox %1? Its Python state is lost; the next request in its "
                      "session starts a fresh sandbox.")
                       .arg(id)))
        return false;
    if (!m_commands->deleteSandbox(id))
        return false;
    m_model->markDeleting(id);
    return true;
}

bool SandboxesPanel::deleteAll() {
    if (m_model->rowCount() == 0 || !m_commands || !m_commands->isAvailable())
        return false;
    if (!m_confirm(tr("Delete all %n sandbox(es)?", nullptr, m_model->rowCount())))
        return false;
    if (!m_commands->deleteAll())
        return false;
    for (const QString &id : m_model->containerIds())
        m_model->markDeleting(id);
    return true;
}

void SandboxesPanel::updateButtons() {
    const bool available = m_commands && m_commands->isAvailable();
    m_note->setText(available ? QString()
                              : tr("Sandbox registry not connected: deleting is unavailable."));
    m_delete->setEnabled(available && !selectedContainerId().isEmpty());
    m_deleteAll->setEnabled(available && m_model->rowCount() > 0);
}

} // namespace loopscope
