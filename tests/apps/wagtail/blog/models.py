from wagtail.admin.panels import FieldPanel
from wagtail.fields import RichTextField
from wagtail.models import Page


class BlogPage(Page):
    """A page with a rich-text body, edited in the admin with Draftail (Draft.js)."""

    body = RichTextField(blank=True)

    content_panels = Page.content_panels + [FieldPanel("body")]
