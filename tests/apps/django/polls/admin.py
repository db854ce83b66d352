from django.contrib import admin

from .models import Choice, Question


class ChoiceInline(admin.StackedInline):
    model = Choice
    extra = 2


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    fields = ["question_text", "pub_date", "published"]
    inlines = [ChoiceInline]
    list_display = ["question_text", "pub_date", "published"]
    list_editable = ["published"]  # edited fields + an action make the admin call confirm()
    list_filter = ["published"]
    search_fields = ["question_text"]


@admin.register(Choice)
class ChoiceAdmin(admin.ModelAdmin):
    # The question is a ForeignKey select with the "+" add-related link (a popup window).
    fields = ["question", "choice_text", "votes"]
    list_display = ["choice_text", "question", "votes"]
