"""The interface's language: which one (choice.py), its words (language.py), how its numbers
read (numbers.py), and the marker for strings translated only where shown (marker.py). The
catalogs are app/locale/<code>/LC_MESSAGES/scriptorium.po, compiled to .mo beside them."""
